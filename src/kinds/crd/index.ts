/**
 * @module kinds/crd
 * Kinds defined by CustomResourceDefinition files (`--crd PATH`): each document is checked as kube-apiserver checks
 * a CRD on create (validation.ts; a refusal stops the start with kube's message, naming the file), then served as
 * kube would serve it (kind.ts), through the same generic registry as the kinds written in code.
 */
import type { Kind } from '../../registry/kind-controller.js';
import { crdKind } from './kind.js';
import { filesOf, readDocuments } from './load.js';
import type { CustomResourceDefinition } from './types.js';
import { crdInvalidMessage, validateCrd } from './validation.js';

export type { CustomResourceDefinition } from './types.js';

/** LoadedCrds is what the files define: the kinds, and kube's warnings about the documents (file named). */
export interface LoadedCrds {
  kinds: Kind[];
  crds: CustomResourceDefinition[];
  warnings: string[];
}

/** CrdRefused is a CRD file the server will not serve: its message is the one line to print. */
export class CrdRefused extends Error {}

/**
 * loadCrds reads, checks and builds the kinds of every CRD in `paths`. Throws CrdRefused whose message is the first
 * problem, prefixed with its file: kube's own refusal for an invalid CRD. `builtIn` are the kinds served from code:
 * a CRD may not serve the same resource.
 */
export function loadCrds(paths: readonly string[], builtIn: readonly Kind[] = []): LoadedCrds {
  try {
    return load(paths, builtIn);
  } catch (e) {
    throw e instanceof CrdRefused ? e : new CrdRefused((e as Error).message);
  }
}

function load(paths: readonly string[], builtIn: readonly Kind[]): LoadedCrds {
  const warnings: string[] = [];
  const crds: CustomResourceDefinition[] = [];
  const seen = new Map<string, string>();
  for (const { file, index, doc } of readDocuments(filesOf(paths))) {
    const where = `${file} (document ${index})`;
    const tm = doc as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
    if (tm.kind !== 'CustomResourceDefinition' || tm.apiVersion !== 'apiextensions.k8s.io/v1') {
      throw new Error(`${where}: expected an apiextensions.k8s.io/v1 CustomResourceDefinition, found ${String(tm.apiVersion)} ${String(tm.kind)}`);
    }
    const check = validateCrd(doc);
    const name = typeof tm.metadata?.name === 'string' ? tm.metadata.name : '';
    for (const w of check.warnings) warnings.push(`${where}: ${name}: ${w}`);
    if (check.errors.length) throw new Error(`${where}: ${crdInvalidMessage(name, check.errors)}`);
    const crd = doc as CustomResourceDefinition;
    const before = seen.get(crd.metadata.name);
    if (before) throw new Error(`${where}: CustomResourceDefinition ${crd.metadata.name} is also defined in ${before}`);
    seen.set(crd.metadata.name, where);
    const taken = builtIn.find((k) => k.storage.group === crd.spec.group && k.storage.plural === crd.spec.names.plural);
    if (taken) throw new Error(`${where}: ${crd.spec.names.plural}.${crd.spec.group} is served by this server's own ${taken.storage.kind} kind`);
    crds.push(crd);
  }
  return { kinds: crds.map(crdKind), crds, warnings };
}
