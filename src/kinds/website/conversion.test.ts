/**
 * Conversion v1alpha1 ⇄ v1 over many generated objects, both directions: a round trip gives back the object it
 * started from, the converted object is valid in its version (schema and validation, nothing pruned), and every
 * managedFields path converts to the field holding the same value, and back to itself.
 */
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { compileSchemaAdmission } from '../../admission/schema.js';
import { cloneJson } from '../../apis/meta/json-clone.js';
import { getAt, leafPaths } from '../../registry/object-paths.js';
import { toV1, toV1alpha1, v1alpha1Conversion } from './conversion.js';
import { websiteDefinition as v1Def, websiteSchema as v1Schema, type Website as V1 } from './v1.js';
import { NODE_PORT_ANNOTATION, nodePortAnnotation, websiteDefinition as alphaDef, websiteSchema as alphaSchema, type Website as V1alpha1 } from './v1alpha1.js';

// A small seeded generator (mulberry32), so a failure names the seed that reproduces it.
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[int(0, xs.length - 1)] as T;
  const maybe = (p = 0.5) => next() < p;
  return { int, pick, maybe };
}
type Rng = ReturnType<typeof rng>;

const REPOS = ['https://github.com/luksa/kubia-website-example.git', 'ssh://git@git.example.com/site.git', 'git@github.com:a/b.git', 'git://example.com/x'];
const TYPES = ['NodePort', 'ClusterIP', 'LoadBalancer'] as const;

function metadata(r: Rng, annotations: Record<string, string>) {
  const labels: Record<string, string> = {};
  for (let i = r.int(0, 3); i > 0; i--) labels[`l${r.int(0, 9)}`] = `v${r.int(0, 99)}`;
  for (let i = r.int(0, 2); i > 0; i--) annotations[`example.com/a${r.int(0, 9)}`] = `text ${r.int(0, 999)}`;
  return {
    name: `site-${r.int(0, 9999)}`,
    namespace: r.pick(['default', 'team-a']),
    uid: `uid-${r.int(0, 1e6)}`,
    resourceVersion: String(r.int(1, 1e6)),
    generation: r.int(1, 9),
    creationTimestamp: '2026-11-27T08:00:00Z',
    ...(Object.keys(labels).length ? { labels } : {}),
    ...(Object.keys(annotations).length ? { annotations } : {}),
    ...(r.maybe(0.2) ? { finalizers: ['extensions.example.com/cleanup'] } : {}),
    ...(r.maybe(0.3)
      ? {
          managedFields: [
            {
              manager: 'kubectl',
              operation: 'Apply',
              apiVersion: 'extensions.example.com/v1alpha1',
              time: '2026-11-27T08:00:00Z',
              fieldsType: 'FieldsV1',
              fieldsV1: { 'f:spec': { 'f:gitRepo': {} } },
            },
          ],
        }
      : {}),
  };
}

function status(r: Rng) {
  if (!r.maybe(0.6)) return {};
  return {
    status: {
      observedGeneration: r.int(1, 9),
      replicas: r.int(0, 5),
      readyReplicas: r.int(0, 5),
      deployment: 'd',
      service: 's',
      ...(r.maybe() ? { nodePort: r.int(30000, 32767) } : {}),
      conditions: [
        {
          type: 'Ready',
          status: r.pick(['True', 'False', 'Unknown'] as const),
          reason: 'R',
          lastTransitionTime: '2026-11-27T08:00:00Z',
          observedGeneration: 1,
        },
      ],
    },
  };
}

function alphaObject(r: Rng): V1alpha1 {
  const type = r.pick(TYPES);
  const annotations: Record<string, string> = {};
  // A node port as v1alpha1 carries it; sometimes a value an earlier release let through (kept as an annotation).
  if (type !== 'ClusterIP' && r.maybe(0.4)) annotations[NODE_PORT_ANNOTATION] = String(r.int(30000, 32767));
  else if (r.maybe(0.1)) annotations[NODE_PORT_ANNOTATION] = r.pick(['abc', '80', '030080', '']);
  const repo = r.pick(REPOS);
  return {
    apiVersion: 'extensions.example.com/v1alpha1',
    kind: 'Website',
    metadata: metadata(r, annotations),
    spec: {
      gitRepo: repo,
      replicas: r.int(0, 100),
      syncIntervalSeconds: r.int(5, 86400),
      serviceType: type,
      ...(r.maybe() ? { branch: r.pick(['main', 'release-1.0', 'gh-pages']) } : {}),
      ...(r.maybe(0.3) && !repo.startsWith('git://') ? { secretRef: { name: 'creds' } } : {}),
    },
    ...status(r),
  };
}

function v1Object(r: Rng): V1 {
  const type = r.pick(TYPES);
  const repo = r.pick(REPOS);
  return {
    apiVersion: 'extensions.example.com/v1',
    kind: 'Website',
    metadata: metadata(r, {}),
    spec: {
      replicas: r.int(0, 100),
      git: {
        repository: repo,
        syncIntervalSeconds: r.int(5, 86400),
        ...(r.maybe() ? { branch: r.pick(['main', 'release-1.0']) } : {}),
        ...(r.maybe(0.3) && !repo.startsWith('git://') ? { secretRef: { name: 'creds' } } : {}),
      },
      service: { type, ...(type !== 'ClusterIP' && r.maybe() ? { nodePort: r.int(30000, 32767) } : {}) },
    },
    ...status(r),
  };
}

const alphaAdmission = compileSchemaAdmission(alphaSchema);
const v1Admission = compileSchemaAdmission(v1Schema);

// validIn checks an object as the store would on create: nothing to prune, no schema error, no validation error
// (validation ratchets against the object itself, as an update that changes nothing).
function errorsIn(obj: V1 | V1alpha1, version: 'v1' | 'v1alpha1', old?: V1 | V1alpha1): string[] {
  const copy = cloneJson(obj) as unknown as Record<string, unknown>;
  const admission = version === 'v1' ? v1Admission : alphaAdmission;
  const pruned = admission.pruneUnknown(copy);
  const schema = admission.defaultAndValidate(copy).map((e) => e.message);
  const semantic =
    version === 'v1' ? (v1Def.validate?.(obj as V1, old as V1 | undefined) ?? []) : (alphaDef.validate?.(obj as V1alpha1, old as V1alpha1 | undefined) ?? []);
  return [...pruned.map((p) => `pruned ${p}`), ...schema, ...semantic.map((e) => e.message)];
}

const SEEDS = 2000;

describe('Website conversion', () => {
  it(`v1alpha1 → v1 → v1alpha1 gives back the object (${SEEDS} generated objects), valid in v1`, () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const a = alphaObject(rng(seed));
      const before = cloneJson(a);
      const v1 = toV1(a);
      expect(a, `seed ${seed}: the input is not modified`).toEqual(before);
      expect(v1.apiVersion).toBe('extensions.example.com/v1');
      expect(toV1alpha1(v1), `seed ${seed}`).toEqual(a);
      // An annotation an earlier release let through stays an annotation in v1, unchanged, so it ratchets there.
      const old = v1.metadata.annotations?.[NODE_PORT_ANNOTATION] !== undefined ? v1 : undefined;
      if (errorsIn(a, 'v1alpha1', a).length === 0) expect(errorsIn(v1, 'v1', old), `seed ${seed}`).toEqual([]);
    }
  });

  it(`v1 → v1alpha1 → v1 gives back the object (${SEEDS} generated objects), valid in v1alpha1`, () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const v1 = v1Object(rng(seed));
      expect(errorsIn(v1, 'v1'), `seed ${seed}: generated objects are valid`).toEqual([]);
      const a = toV1alpha1(v1);
      expect(toV1(a), `seed ${seed}`).toEqual(v1);
      expect(errorsIn(a, 'v1alpha1'), `seed ${seed}`).toEqual([]);
      if (v1.spec.service.nodePort !== undefined) expect(a.metadata.annotations?.[NODE_PORT_ANNOTATION]).toBe(String(v1.spec.service.nodePort));
    }
  });

  it('translates every field path to the field holding the same value, and back', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const a = alphaObject(rng(seed));
      const v1 = toV1(a);
      for (const [from, to, paths, there, back] of [
        [a, v1, [...leafPaths(a, 'main'), ...leafPaths(a, 'status')], v1alpha1Conversion.fieldToStorage, v1alpha1Conversion.fieldFromStorage],
        [v1, a, [...leafPaths(v1, 'main'), ...leafPaths(v1, 'status')], v1alpha1Conversion.fieldFromStorage, v1alpha1Conversion.fieldToStorage],
      ] as const) {
        for (const p of paths) {
          // Paths are translated without looking at values: a node port annotation v1 cannot read (an earlier
          // release's) stays an annotation in v1, while its path names spec.service.nodePort. Such a field's
          // ownership is the only one that does not follow it.
          if (p[2] === NODE_PORT_ANNOTATION && nodePortAnnotation(String(getAt(from, p))) === undefined) continue;
          const q = there(p);
          expect(q, `seed ${seed}: ${p.join('.')}`).toBeDefined();
          // The node port is a number in v1 and its decimal text in the v1alpha1 annotation.
          const x = getAt(to, q ?? []);
          const y = getAt(from, p);
          expect(isDeepStrictEqual(x, y) || (typeof x !== typeof y && String(x) === String(y)), `seed ${seed}: ${p.join('.')} → ${q?.join('.')}`).toBe(true);
          expect(back(q ?? []), `seed ${seed}: ${p.join('.')} and back`).toEqual(p);
        }
      }
    }
  });

  it('has no v1alpha1 counterpart for the groups v1 adds, only for the fields in them', () => {
    expect(v1alpha1Conversion.fieldFromStorage(['spec', 'git'])).toBeUndefined();
    expect(v1alpha1Conversion.fieldFromStorage(['spec', 'service'])).toBeUndefined();
    expect(v1alpha1Conversion.fieldFromStorage(['spec', 'service', 'nodePort'])).toEqual(['metadata', 'annotations', NODE_PORT_ANNOTATION]);
    expect(v1alpha1Conversion.fieldToStorage(['spec', 'secretRef', 'name'])).toEqual(['spec', 'git', 'secretRef', 'name']);
  });
});
