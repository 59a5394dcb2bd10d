/**
 * The hostile cases against kube-apiserver serving the Website as a CRD (etcd and kube-apiserver from the e2e
 * build, test/bench/targets.mjs startCrd): every code kube gives must fall inside the set the suite expects of us,
 * except where kube itself answers 5xx, drops the connection or answers without a Status (the suite demands better
 * of us there). A case kube answers differently is a wrong expectation, not a server bug.
 * HOSTILE_REPORT=file.json writes every disagreement.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLASSES, DC, SCRATCH, fixtureNamespace, generateCases } from './cases.js';
import { OTHER_NAMESPACE, writeFixtures } from './fixtures.js';
import { Client, runCases, Tally } from './runner.js';
import { startCrd } from '../bench/targets.mjs';

// Where kube-apiserver itself stores what a Go client cannot decode, the suite still demands a refusal of us:
// - a condition's lastTransitionTime given as an array passes the CRD's `type: string, format: date-time` schema;
//   once one is stored, the status updates after it conflict (409) with the stale resourceVersion they carry.
const KUBE_QUIRKS = [/lastTransitionTime=\[/, /^update fx-status\/status /];

const BIN_ROOT = join(homedir(), '.cache/website-apiserver/e2e');
let target: Awaited<ReturnType<typeof startCrd>>;
let client: Client;
let dir: string;
const tally = new Tally();

beforeAll(async () => {
  const bin = readdirSync(BIN_ROOT)
    .map((d) => join(BIN_ROOT, d))
    .find((d) => existsSync(join(d, 'kube-apiserver')));
  if (!bin) throw new Error(`no e2e binaries under ${BIN_ROOT}: run test/e2e/scripts/build-binaries.sh`);
  dir = mkdtempSync(join(tmpdir(), 'hostile-crd-'));
  target = await startCrd(dir, bin, () => {});
  await target.prepare([...CLASSES.map(fixtureNamespace), OTHER_NAMESPACE, SCRATCH, DC]);
  client = new Client({ url: target.url, tls: target.tls });
});

afterAll(async () => {
  console.log(`hostile cases against kube-apiserver + Website CRD\n${tally.summary()}`);
  if (process.env.HOSTILE_REPORT) writeFileSync(process.env.HOSTILE_REPORT, JSON.stringify({ summary: tally.summary(), failures: tally.failures }, null, 1));
  await client?.close();
  await target?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('kube-apiserver answers every hostile case inside the expected set (or with its own 5xx)', async () => {
  const fixtures = await writeFixtures(client, CLASSES.map(fixtureNamespace));
  const cases = generateCases((cls) => fixtures.filter((f) => f.ns === fixtureNamespace(cls)));
  await runCases(client, cases, tally, 8);
  // Only the code counts here: kube's own 5xx, dropped connections and non-Status bodies (Go's plain-text 400, 404
  // page not found, 431) are what the suite demands better of us.
  const disagreements = tally.failures.filter(
    (f) => !/^5\d\d |^no answer/.test(f.answer) && !/body|Content-Type/.test(f.problem) && !KUBE_QUIRKS.some((q) => q.test(f.name)),
  );
  expect(disagreements.map((f) => `[${f.cls}] ${f.name}: kube ${f.answer.slice(0, 200)} (expected ${f.expected}; ${f.problem})`).slice(0, 40)).toEqual([]);
});
