/**
 * The REST map is built without HTTP: which resource paths each kind gets (the object always, /status and /scale
 * when it has them, in every served version), the stores behind them used directly, storeOf, and the start-up tasks
 * run by hand. Its module graph reaches neither fastify nor the HTTP layers.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { website } from '../kinds/website/index.js';
import { MemoryStorage } from '../storage/memory-storage.js';
import { airport } from '../../test/kinds/airport.js';
import { flightTicket } from '../../test/kinds/flight-ticket.js';
import { buildRestMap, type RestMap } from './rest-map.js';
import { ScaleStore } from './scale-store.js';
import type { TaskLog } from './startup-tasks.js';
import { StatusStore } from './status-store.js';
import { ResourceStore } from './store.js';

const OPTS = { dryRun: false, fieldValidation: 'Strict' as const, manager: 'test' };
const paths = (map: RestMap) => map.groupVersions.map((gv) => ({ gv: `${gv.group}/${gv.version}`, resources: [...gv.resources.keys()] }));

describe('buildRestMap', () => {
  it('gives each served version its object, and /status and /scale only when the kind has them', () => {
    const map = buildRestMap([website, { storage: flightTicket }, { storage: airport }], new MemoryStorage());
    expect(paths(map)).toEqual([
      { gv: 'extensions.example.com/v1', resources: ['websites', 'websites/status', 'websites/scale'] },
      { gv: 'extensions.example.com/v1alpha1', resources: ['websites', 'websites/status', 'websites/scale'] },
      // Two kinds of one group/version share its entry, in the order they were given.
      { gv: 'testing.example.com/v1', resources: ['flighttickets', 'flighttickets/status', 'airports'] },
    ]);
    const testing = map.groupVersions[2]?.resources;
    expect(testing?.get('flighttickets')).toBeInstanceOf(ResourceStore);
    expect(testing?.get('flighttickets/status')).toBeInstanceOf(StatusStore);
    expect(map.groupVersions[0]?.resources.get('websites/scale')).toBeInstanceOf(ScaleStore);
  });

  it("storeOf is a kind's object store in its storage version, and refuses a kind not served", () => {
    const ticketKind = { storage: flightTicket };
    const map = buildRestMap([website, ticketKind], new MemoryStorage());
    expect(map.storeOf(website).def.version).toBe(website.storage.version);
    expect(map.storeOf(ticketKind)).toBe(map.groupVersions.find((gv) => gv.group === 'testing.example.com')?.resources.get('flighttickets'));
    expect(() => map.storeOf({ storage: airport })).toThrow('kind Airport is not served');
  });

  it('serves every verb with no HTTP at all: the object store creates, the status store writes status, the scale store scales', async () => {
    const map = buildRestMap([website], new MemoryStorage(), { standalone: true });
    const v1 = map.groupVersions.find((gv) => gv.version === 'v1')?.resources;
    const objects = v1?.get('websites') as ResourceStore;
    const status = v1?.get('websites/status') as StatusStore;
    const scale = v1?.get('websites/scale') as ScaleStore;
    await objects.create(
      'ns',
      { apiVersion: 'extensions.example.com/v1', kind: 'Website', metadata: { name: 'w' }, spec: { git: { repository: 'https://github.com/a/b' } } },
      OPTS,
    );
    expect((await scale.get('ns', 'w'))['spec']).toEqual({ replicas: 1 });
    const scaled = await scale.patch('ns', 'w', 'application/merge-patch+json', { spec: { replicas: 3 } }, OPTS);
    expect(scaled.object).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 3 } });
    // The scale store wrote the object's replicas, owned under subresource "scale".
    const w = await objects.get('ns', 'w');
    expect((w['spec'] as { replicas: number }).replicas).toBe(3);
    const entries = (w.metadata.managedFields ?? []) as { manager: string; subresource?: string }[];
    expect(entries.map((m) => `${m.manager}:${m.subresource ?? ''}`).sort()).toEqual(['test:', 'test:scale']);
    // A status write keeps metadata and spec as stored, whatever the body says of them.
    const written = await status.update('ns', 'w', { ...w, spec: { replicas: 9 }, status: { phase: 'x' } }, { ...OPTS, fieldValidation: 'Ignore' });
    expect((written.object['spec'] as { replicas: number }).replicas).toBe(3);
    // Another version's stores see the same object, converted.
    const v1alpha1 = map.groupVersions.find((gv) => gv.version === 'v1alpha1')?.resources.get('websites/scale') as ScaleStore;
    expect((await v1alpha1.get('ns', 'w'))['spec']).toEqual({ replicas: 3 });
  });

  it('makes the start-up tasks plain tasks: a migration for a kind with several versions or defaults, a metadata repair per kind', async () => {
    const storage = new MemoryStorage();
    const map = buildRestMap([website, { storage: flightTicket }, { storage: airport }], storage);
    expect(map.startupTasks.map((t) => t.name)).toEqual([
      'migrate-storage-version extensions.example.com/websites',
      'repair-stored-metadata websites.extensions.example.com',
      // FlightTicket's schema has defaults, which a stored object is given as kube's codec gives them on read.
      'migrate-storage-version testing.example.com/flighttickets',
      'repair-stored-metadata flighttickets.testing.example.com',
      'repair-stored-metadata airports.testing.example.com',
    ]);
    // An object an earlier release stored in v1alpha1 is rewritten in the storage version by the migration task.
    await storage.create(
      { resource: 'extensions.example.com/websites', namespace: 'ns', name: 'old' },
      {
        apiVersion: 'extensions.example.com/v1alpha1',
        kind: 'Website',
        metadata: { name: 'old', namespace: 'ns', uid: 'u' },
        spec: { gitRepo: 'https://github.com/a/b' },
      },
    );
    const lines: string[] = [];
    const log: TaskLog = { info: () => {}, warn: (_f, m) => lines.push(m), error: (_f, m) => lines.push(`error: ${m}`), child: () => log };
    for (const task of map.startupTasks) await task.run({ closing: () => false, log });
    expect(lines).toEqual(['migrating stored objects to the storage version', 'migrated stored objects to the storage version']);
    expect((await storage.get({ resource: 'extensions.example.com/websites', namespace: 'ns', name: 'old' }))?.apiVersion).toBe('extensions.example.com/v1');

    // Both walks completed and are marked in the store: the next start (a new map on the same store) makes neither,
    // and its reads and lists no longer convert while waiting for one.
    const again = buildRestMap([website, { storage: flightTicket }, { storage: airport }], storage);
    expect(again.startupTasks.map((t) => t.name)).toEqual([
      'repair-stored-metadata websites.extensions.example.com',
      'repair-stored-metadata flighttickets.testing.example.com',
      'repair-stored-metadata airports.testing.example.com',
    ]);
    for (const task of again.startupTasks) await task.run({ closing: () => false, log });
    expect(lines).toHaveLength(2);
    // A changed schema (a default added, a field dropped) is not the one marked: its migration runs again.
    const changed = { ...website, storage: { ...website.storage, schema: { ...website.storage.schema, description: 'changed' } } };
    expect(buildRestMap([changed], storage).startupTasks.map((t) => t.name)[0]).toBe('migrate-storage-version extensions.example.com/websites');
  });

  it('needs no fastify: nothing rest-map.ts imports, however indirectly, is fastify or an HTTP layer', () => {
    const src = resolve(dirname(fileURLToPath(import.meta.url)), '..');
    const seen = new Set<string>();
    const bare = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^;]*?from '([^']+)'/gms)) {
        if (!spec?.startsWith('.')) bare.add(spec ?? '');
        else visit(join(dirname(file), spec.replace(/\.js$/, '.ts')));
      }
    };
    visit(join(src, 'registry', 'rest-map.ts'));
    expect([...bare].filter((m) => m.includes('fastify'))).toEqual([]);
    const layers = [...seen].map((f) => f.slice(src.length + 1).split('/')[0]);
    expect(layers.filter((l) => ['endpoints', 'server', 'discovery', 'observability'].includes(l ?? ''))).toEqual([]);
    expect(seen.size).toBeGreaterThan(10);
  });
});
