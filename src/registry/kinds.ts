/**
 * @module registry/kinds
 * The list of kinds this server serves. Adding a kind is one line here plus its definition module.
 */
import { websiteDefinition } from '../apis/website/v1alpha1.js';
import type { ResourceDefinition } from './resource.js';

/** kinds: every ResourceDefinition served, in discovery order. */
export const kinds: readonly ResourceDefinition[] = [websiteDefinition as unknown as ResourceDefinition];
