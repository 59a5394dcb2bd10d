/**
 * @module apis/meta/json-schema
 * The structural OpenAPI v3 schema a kind declares (apiextensions' JSONSchemaProps, the subset we use): admission
 * validates with it, discovery publishes it, and the kinds write it.
 */

/** JSONSchema is the structural OpenAPI v3 schema subset we use (CRD-style, with x-kubernetes-* extensions). */
export interface JSONSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  properties?: Record<string, JSONSchema>;
  additionalProperties?: JSONSchema | boolean;
  items?: JSONSchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-embedded-resource'?: boolean;
  [ext: `x-${string}`]: unknown;
}
