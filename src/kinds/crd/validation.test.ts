/**
 * validateCrd against kube-apiserver 1.37.2's own answers: the shared CRD corpus must be accepted with kube's
 * (empty) warnings, and each mutation in test/fixtures/crd-validation/validation-cases.json must be refused with the Status message and
 * warnings kube returned when the same document was created on a real kube-apiserver
 * (test/e2e/crd-validation.test.ts re-records and compares them live).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { crdInvalidMessage, DECODE_ERROR_FIELD, validateCrd, WEBHOOK_UNSUPPORTED } from './validation.js';
import { applyCaseOps, CASES_FILE, CORPUS_DIR, type CrdCase } from '../../../test/helpers/crd-validation-cases.js';

const CASES = JSON.parse(readFileSync(CASES_FILE, 'utf8')) as CrdCase[];

const corpus = [
  ...readdirSync(CORPUS_DIR).filter((f) => f.endsWith('.yaml') && !f.endsWith('.example.yaml')),
  ...readdirSync(join(CORPUS_DIR, 'seeds'))
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.example.yaml') && !f.includes('as-written'))
    .map((f) => `seeds/${f}`),
];

function answer(doc: Record<string, unknown>): { code: number; message: string | null; warnings: string[] } {
  const r = validateCrd(doc);
  const name = String((doc.metadata as { name?: string } | undefined)?.name ?? '');
  if (r.errors.length === 0) return { code: 201, message: null, warnings: r.warnings };
  const message = crdInvalidMessage(name, r.errors);
  return { code: r.errors.some((e) => e.field === DECODE_ERROR_FIELD) ? 400 : 422, message, warnings: r.warnings };
}

describe('validateCrd: the shared corpus', () => {
  it('reads every CRD of the corpus', () => expect(corpus.length).toBeGreaterThanOrEqual(14));
  it.each(corpus)('%s is accepted with no warnings, as kube-apiserver accepts it', (file) => {
    const doc = YAML.parse(readFileSync(join(CORPUS_DIR, file), 'utf8')) as Record<string, unknown>;
    expect(answer(doc)).toEqual({ code: 201, message: null, warnings: [] });
  });
  it('defaults in place: singular, listKind and conversion None', () => {
    const doc = YAML.parse(readFileSync(join(CORPUS_DIR, 'samplecontroller.k8s.io_foos.yaml'), 'utf8')) as { spec: Record<string, Record<string, unknown>> };
    delete doc.spec.names!.singular;
    validateCrd(doc);
    expect(doc.spec.names).toMatchObject({ singular: 'foo', listKind: 'FooList' });
    expect(doc.spec.conversion).toEqual({ strategy: 'None' });
  });
});

describe('validateCrd: refusals recorded from kube-apiserver 1.37.2', () => {
  it('holds at least 25 distinct refusals', () => expect(CASES.filter((c) => c.kube.code !== 201).length).toBeGreaterThanOrEqual(25));
  it.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const doc = applyCaseOps(c);
    expect(answer(doc)).toEqual(c.kube);
  });
});

describe('validateCrd: what this server refuses although kube accepts it', () => {
  const webhook = CASES.find((c) => c.name === 'webhook conversion with an unknown review version')!;
  it('a valid Webhook conversion is refused with our own message, after kube would have accepted it', () => {
    const doc = applyCaseOps({
      ...webhook,
      ops: [
        {
          path: ['spec', 'conversion'],
          value: { strategy: 'Webhook', webhook: { clientConfig: { url: 'https://convert.example.com/crd' }, conversionReviewVersions: ['v1'] } },
        },
      ],
    });
    const r = validateCrd(doc);
    expect(r.errors).toEqual([WEBHOOK_UNSUPPORTED]);
    expect(crdInvalidMessage('shirts.stable.example.com', r.errors)).toBe(
      'CustomResourceDefinition.apiextensions.k8s.io "shirts.stable.example.com" is invalid: spec.conversion.strategy: Forbidden: Webhook conversion is not supported by this server (kube-apiserver would accept it); use strategy None',
    );
  });
  it("a Webhook conversion kube refuses gets only kube's errors", () => {
    expect(answer(applyCaseOps(webhook))).toEqual(webhook.kube);
  });
});
