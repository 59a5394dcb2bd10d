/**
 * CRD validation, live: every recorded case of test/fixtures/crd-validation/validation-cases.json (a corpus CRD with some
 * edits) and every corpus CRD is created on the plane's kube-apiserver (dryRun=All, so the full create path runs,
 * validation and warnings included, and nothing is left behind; fieldValidation=Warn as a file would be read) and
 * kube's answer is compared with the recorded one and with validateCrd's. When kube 1.37 is rebuilt or the cases are
 * edited, this is the suite that says the recorded answers are still kube's. With CRD_VALIDATION_RECORD=1 it writes
 * kube's answers into the cases file instead of comparing them with it (a new case is added there with any `kube`).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { applyCaseOps, CASES_FILE, CORPUS_DIR, type CrdCase } from '../helpers/crd-validation-cases.js';
import { crdInvalidMessage, DECODE_ERROR_FIELD, validateCrd } from '../../src/kinds/crd/validation.js';
import { e2e } from './harness/state.js';

const env = e2e();
const agent = new Agent({ connect: { ca: readFileSync(env.caFile, 'utf8') } });
afterAll(() => agent.close());

const CASES = JSON.parse(readFileSync(CASES_FILE, 'utf8')) as CrdCase[];
const RECORD = process.env['CRD_VALIDATION_RECORD'] === '1';
afterAll(() => {
  if (RECORD) writeFileSync(CASES_FILE, `${JSON.stringify(CASES, null, 1)}\n`);
});

interface Answer {
  code: number;
  message: string | null;
  warnings: string[];
}

// A Warning header value is `299 - "text"` with the text's quotes escaped; undici joins repeated headers with ", ".
function warningsOf(h: string | string[] | undefined): string[] {
  const values = h === undefined ? [] : Array.isArray(h) ? h : [h];
  return values
    .flatMap((v) => v.split(/, (?=\d{3} )/))
    .map((v) =>
      v
        .replace(/^\d{3} - "/, '')
        .replace(/"$/, '')
        .replace(/\\"/g, '"'),
    );
}

async function kubeCreate(doc: unknown): Promise<Answer> {
  const r = await request(`${env.server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions?dryRun=All&fieldValidation=Warn`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${env.tokens.admin}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(doc),
  });
  const body = (await r.body.json()) as { kind?: string; message?: string };
  return { code: r.statusCode, message: body.kind === 'Status' ? (body.message ?? null) : null, warnings: warningsOf(r.headers['warning']) };
}

/**
 * causeSet is an answer with the causes of its message in sorted order: kube validates some sibling fields in Go map
 * order (an embedded default's apiVersion and kind, for one), so the order of their causes changes from one create to
 * the next. Each cause starts with its field path (spec…, metadata…, status…).
 */
function causeSet(a: Answer): Answer {
  const m = a.message === null ? null : /^(.* is invalid: )\[(.*)\]$/s.exec(a.message);
  if (!m) return a;
  return {
    ...a,
    message: `${m[1]}[${(m[2] ?? '')
      .split(/, (?=(?:spec|metadata|status)[.[])/)
      .sort()
      .join(', ')}]`,
  };
}

function ours(doc: Record<string, unknown>): Answer {
  const r = validateCrd(doc);
  const name = String((doc.metadata as { name?: string } | undefined)?.name ?? '');
  if (r.errors.length === 0) return { code: 201, message: null, warnings: r.warnings };
  const message = crdInvalidMessage(name, r.errors);
  return { code: r.errors.some((e) => e.field === DECODE_ERROR_FIELD) ? 400 : 422, message, warnings: r.warnings };
}

describe('CRD create validation: kube-apiserver and validateCrd give the same answer', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const kube = await kubeCreate(applyCaseOps(c));
    if (RECORD) c.kube = kube;
    expect(causeSet(kube)).toEqual(causeSet(c.kube));
    expect(causeSet(ours(applyCaseOps(c)))).toEqual(causeSet(kube));
  });

  const corpus = readdirSync(CORPUS_DIR).filter((f) => f.endsWith('.yaml') && !f.endsWith('.example.yaml'));
  it.each(corpus)('corpus %s is accepted by both, with the same warnings', async (file) => {
    const text = readFileSync(join(CORPUS_DIR, file), 'utf8');
    const kube = await kubeCreate(YAML.parse(text));
    expect(kube.code).toBe(201);
    expect(ours(YAML.parse(text) as Record<string, unknown>)).toEqual(kube);
  });
});
