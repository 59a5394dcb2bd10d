/**
 * Runtime errors as kube-apiserver 1.37.2 words them (CRD errprobes.celx.example.com, object spec
 * {s: "x[", i: 3, m: {a: "b"}}): each rule's evaluation error, in rule order.
 */
import { expect, it } from 'vitest';
import type { JSONSchema } from '../../apis/meta/json-schema.js';
import { compileCelRules } from './index.js';

const RULES: string[] = [
  '[1][self.i] == 1',
  '9223372036854775807 + self.i > 0',
  "self.m['nope'] == 'x'",
  'int(self.s) == 1',
  'optional.none().value() == 1',
  "self.s.substring(5) == ''",
  'quantity(self.s).isInteger()',
  "duration(self.s) > duration('1s')",
  "timestamp(self.s) > timestamp('2020-01-01T00:00:00Z')",
  'self.i / 0 == 1',
  'self.i % 0 == 1',
  '[1,2][-1] == 1',
  'dyn(self.m).nope == 1',
  'ip(self.s).family() == 4',
  'cidr(self.s).prefixLength() == 1',
  "url(self.s).getHost() == ''",
  'semver(self.s).major() == 1',
  'self.s.matches(self.s)',
  '[1].min() == [].min()',
  "self.s.charAt(10) == ''",
  'uint(self.i - 5) == 1u',
  'double(self.s) > 1.0',
  "self.s.split('x', -2).size() == 0",
];

const KUBE: string[] = [
  'spec: Invalid value: "object": index out of bounds: 3 evaluating rule: [1][self.i] == 1',
  'spec: Invalid value: "object": integer overflow evaluating rule: 9223372036854775807 + self.i > 0',
  "spec: Invalid value: \"object\": no such key: nope evaluating rule: self.m['nope'] == 'x'",
  "spec: Invalid value: \"object\": type conversion error from 'string' to 'int' evaluating rule: int(self.s) == 1",
  'spec: Invalid value: "object": optional.none() dereference evaluating rule: optional.none().value() == 1',
  'spec: Invalid value: "object": index out of range: 5 evaluating rule: self.s.substring(5) == \'\'',
  'spec: Invalid value: "object": quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\' evaluating rule: quantity(self.s).isInteger()',
  "spec: Invalid value: \"object\": type conversion error from 'string' to 'google.protobuf.Duration' evaluating rule: duration(self.s) > duration('1s')",
  "spec: Invalid value: \"object\": type conversion error from 'string' to 'google.protobuf.Timestamp' evaluating rule: timestamp(self.s) > timestamp('2020-01-01T00:00:00Z')",
  'spec: Invalid value: "object": division by zero evaluating rule: self.i / 0 == 1',
  'spec: Invalid value: "object": modulus by zero evaluating rule: self.i % 0 == 1',
  'spec: Invalid value: "object": index out of bounds: -1 evaluating rule: [1,2][-1] == 1',
  'spec: Invalid value: "object": no such key: nope evaluating rule: dyn(self.m).nope == 1',
  'spec: Invalid value: "object": IP Address "x[" parse error during conversion from string: ParseAddr("x["): unable to parse IP evaluating rule: ip(self.s).family() == 4',
  'spec: Invalid value: "object": network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("x["): no \'/\' evaluating rule: cidr(self.s).prefixLength() == 1',
  'spec: Invalid value: "object": URL parse error during conversion from string: parse "x[": invalid URI for request evaluating rule: url(self.s).getHost() == \'\'',
  'spec: Invalid value: "object": No Major.Minor.Patch elements found evaluating rule: semver(self.s).major() == 1',
  'spec: Invalid value: "object": error parsing regexp: missing closing ]: `[` evaluating rule: self.s.matches(self.s)',
  'spec: Invalid value: "object": min called on empty list evaluating rule: [1].min() == [].min()',
  'spec: Invalid value: "object": index out of range: 10 evaluating rule: self.s.charAt(10) == \'\'',
  'spec: Invalid value: "object": unsigned integer overflow evaluating rule: uint(self.i - 5) == 1u',
  "spec: Invalid value: \"object\": type conversion error from 'string' to 'double' evaluating rule: double(self.s) > 1.0",
  "spec: Invalid value: failed rule: self.s.split('x', -2).size() == 0",
];

it('runtime errors, byte for byte', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        'x-kubernetes-validations': RULES.map((rule) => ({ rule })),
        properties: {
          s: { type: 'string', maxLength: 10 },
          i: { type: 'integer' },
          m: { type: 'object', maxProperties: 3, additionalProperties: { type: 'string', maxLength: 5 } },
        },
      },
    },
  } as unknown as JSONSchema;
  const { rules, errors } = compileCelRules(schema, 'spec.validation.openAPIV3Schema');
  expect(errors).toEqual([]);
  expect(rules.validate({ spec: { s: 'x[', i: 3, m: { a: 'b' } } }, undefined).errors.map((e) => e.message)).toEqual(KUBE);
});
