/**
 * @module kinds
 * The list of kinds this server serves. Adding a kind is its folder under `src/kinds/` plus one line here.
 */
import { website } from './website/index.js';
import type { Kind } from '../registry/kind-controller.js';

/** kinds: every kind served, in discovery order. */
export const kinds: readonly Kind[] = [website];
