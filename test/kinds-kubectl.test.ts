/**
 * The test-only kinds through the whole server as `npm start` runs it (cmd/run.ts: certificates, standalone access,
 * lmdb, the controller manager), in this process, driven by the real kubectl: discovery and api-resources, apply,
 * get with each kind's columns, both versions of Airport, explain per version, and FlightTicket's controller running
 * in standalone mode, whose status no spec write erases.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../src/cmd/options.js';
import { run, type Running } from '../src/cmd/run.js';
import { airportKind, flightTicketKind } from './kinds/controllers.js';
import { table } from './helpers/kubectl-table.js';
import { cleanupTempDirs, tempDir } from './helpers/server-process.js';

let running: Running;
let certDir: string;
let work: string;

beforeAll(async () => {
  certDir = tempDir('kinds-kubectl-certs-');
  work = tempDir('kinds-kubectl-work-');
  const parsed = parseOptions(['--port', '0', '--data-dir', tempDir('kinds-kubectl-data-'), '--cert-dir', certDir, '--log-level', 'silent'], {});
  if (parsed.kind !== 'ok') throw new Error(`options: ${JSON.stringify(parsed)}`);
  running = await run(parsed.options, [flightTicketKind, airportKind]);
}, 30_000);

afterAll(async () => {
  await running?.stop();
  cleanupTempDirs();
});

function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn('kubectl', args, { env: { ...process.env, KUBECONFIG: join(certDir, 'kubeconfig'), KUBECACHEDIR: join(work, 'cache') } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    p.stdin.end(input ?? '');
    p.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('test-only kinds through the real server and kubectl', () => {
  it('api-resources lists them with their scope, short name and preferred version; explain reads each version', async () => {
    const r = await kubectl(['api-resources', '--api-group=testing.example.com']);
    expect(r.stderr).toBe('');
    expect(table(r.stdout).rows).toEqual([
      { NAME: 'airports', SHORTNAMES: '', APIVERSION: 'testing.example.com/v1', NAMESPACED: 'false', KIND: 'Airport' },
      { NAME: 'flighttickets', SHORTNAMES: 'ft', APIVERSION: 'testing.example.com/v1', NAMESPACED: 'true', KIND: 'FlightTicket' },
    ]);
    const beta = await kubectl(['explain', 'airport.spec', '--api-version=testing.example.com/v1beta1']);
    expect(beta.stdout).toMatch(/^\s+town\s+<string> -required-/m);
    const v1 = await kubectl(['explain', 'airport.spec']);
    expect(v1.stdout).toMatch(/^\s+city\s+<string> -required-/m);
  });

  it('FlightTicket: applied, booked by its controller in standalone mode, and a spec patch keeps the status', async () => {
    const ticket = {
      apiVersion: 'testing.example.com/v1',
      kind: 'FlightTicket',
      metadata: { name: 't1', namespace: 'travel' },
      spec: { departure: 'ICN', destination: 'SFO' },
    };
    const file = join(work, 'ticket.json');
    writeFileSync(file, JSON.stringify(ticket));
    expect((await kubectl(['apply', '-f', file])).stdout.trim()).toBe('flightticket.testing.example.com/t1 created');
    const waited = await kubectl(['wait', '-n', 'travel', '--for=jsonpath={.status.booked}=true', 'ft/t1', '--timeout=20s']);
    expect(waited.stdout.trim(), waited.stderr).toBe('flightticket.testing.example.com/t1 condition met');
    const patched = await kubectl(['patch', '-n', 'travel', 'ft', 't1', '--type', 'merge', '-p', '{"spec":{"seats":3}}']);
    expect(patched.stdout.trim()).toBe('flightticket.testing.example.com/t1 patched');
    const got = JSON.parse((await kubectl(['get', '-n', 'travel', 'ft', 't1', '-o', 'json'])).stdout);
    expect(got.spec).toEqual({ departure: 'ICN', destination: 'SFO', seats: 3 });
    expect(got.status).toEqual({ booked: true, note: 'booked in economy' });
    const rows = table((await kubectl(['get', '-n', 'travel', 'flighttickets'])).stdout);
    expect(rows.header).toEqual(['NAME', 'ROUTE', 'BOOKED', 'AGE']);
    expect(rows.rows[0]).toMatchObject({ NAME: 't1', ROUTE: 'ICN-SFO', BOOKED: 'true' });
  });

  it("Airport: cluster-scoped, created in v1beta1, read in both versions with each version's columns", async () => {
    const airport = { apiVersion: 'testing.example.com/v1beta1', kind: 'Airport', metadata: { name: 'nrt' }, spec: { town: 'Narita' } };
    expect((await kubectl(['create', '-f', '-'], JSON.stringify(airport))).stdout.trim()).toBe('airport.testing.example.com/nrt created');
    const v1 = table((await kubectl(['get', 'airports'])).stdout);
    expect(v1.header).toEqual(['NAME', 'CITY', 'AGE']);
    expect(v1.rows[0]).toMatchObject({ NAME: 'nrt', CITY: 'Narita' });
    const beta = table((await kubectl(['get', 'airports.v1beta1.testing.example.com'])).stdout);
    expect(beta.header).toEqual(['NAME', 'TOWN', 'AGE']);
    expect(beta.rows[0]).toMatchObject({ NAME: 'nrt', TOWN: 'Narita' });
    // Its controller (cluster-scoped keys are bare names) labels it.
    const waited = await kubectl(['wait', '--for=jsonpath={.metadata.labels.testing\\.example\\.com/reconciled}=nrt', 'airport/nrt', '--timeout=20s']);
    expect(waited.stdout.trim(), waited.stderr).toBe('airport.testing.example.com/nrt condition met');
  });
});
