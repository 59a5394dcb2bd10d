/**
 * @module apis/meta/conditions
 * metav1.Condition: its type, its structural schema (for a kind's status), and the rule for writing a new set of
 * conditions: lastTransitionTime moves only when a condition's status changes.
 */
import type { JSONSchema } from './json-schema.js';

/** Condition mirrors metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/** conditionSchema is metav1.Condition's schema; `types` names the condition types the kind uses (descriptions only). */
export function conditionSchema(types: readonly string[]): JSONSchema {
  return {
    type: 'object',
    description: 'Condition is one aspect of the current state (metav1.Condition).',
    required: ['type', 'status'],
    properties: {
      type: {
        type: 'string',
        description: `Type of condition: ${types.length > 1 ? `${types.slice(0, -1).join(', ')} or ${types[types.length - 1]}` : types.join('')}.`,
      },
      status: { type: 'string', enum: ['True', 'False', 'Unknown'], description: 'Status of the condition: True, False or Unknown.' },
      reason: { type: 'string', description: "Machine-readable CamelCase reason for the condition's last transition." },
      message: { type: 'string', description: 'Human-readable details about the transition.' },
      lastTransitionTime: { type: 'string', format: 'date-time', description: 'Last time the condition changed status.' },
      observedGeneration: { type: 'integer', minimum: 0, description: 'The .metadata.generation the condition was set for.' },
    },
  };
}

/** conditionsSchema is a status' `conditions` list: a map keyed by type, as `+listType=map +listMapKey=type`. */
export function conditionsSchema(types: readonly string[]): JSONSchema {
  return {
    type: 'array',
    description: `Conditions: ${types.join(', ')}.`,
    items: conditionSchema(types),
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  };
}

/** NewCondition is a condition as computed, before its timestamps and generation are settled. */
export type NewCondition = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/**
 * mergeConditions is meta.SetStatusCondition for each of `next` on the current list: a writer owns only the types it
 * sets. Conditions of other types (a client's, written through /status) stay as they are and where they are; a
 * condition already listed is replaced in place, keeping its lastTransitionTime while its status is unchanged; a new
 * type is appended.
 */
export function mergeConditions(old: readonly Condition[] | undefined, next: readonly NewCondition[], generation: number, now: string): Condition[] {
  const merged = [...(old ?? [])];
  for (const c of next) {
    const at = merged.findIndex((o) => o.type === c.type);
    const prev = at >= 0 ? merged[at] : undefined;
    const lastTransitionTime = prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : now;
    const set = { ...c, lastTransitionTime, observedGeneration: generation };
    if (at >= 0) merged[at] = set;
    else merged.push(set);
  }
  return merged;
}
