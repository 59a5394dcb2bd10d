/**
 * @module observability/audit-event.test
 * The event line as kube-apiserver's log backend writes it (encoding/json of audit/v1 Event), metav1.MicroTime, and
 * the source IPs with the cases of k8s.io/apimachinery pkg/util/net http_test.go TestSourceIPs.
 */
import { describe, expect, it } from 'vitest';
import { canonicalIP, encodeEvent, jsonText, microTime, nowMicros, sourceIPs, type EventData } from './audit-event.js';

describe('encodeEvent', () => {
  const base: EventData = {
    level: 'Metadata',
    auditID: 'a1b2',
    requestURI: '/apis/g/v1/namespaces/ns/websites?fieldManager=kubectl&force=false',
    verb: 'patch',
    user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
    sourceIPs: ['10.0.0.1'],
    userAgent: 'kubectl/v1.37.2',
    requestReceivedTimestamp: Date.UTC(2026, 0, 2, 3, 4, 5) * 1000 + 123456,
  };

  it('writes the fields in the Go struct order, empty ones left out, HTML-escaped, one line', () => {
    expect(encodeEvent(base, 'RequestReceived', base.requestReceivedTimestamp)).toBe(
      '{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1b2","stage":"RequestReceived",' +
        '"requestURI":"/apis/g/v1/namespaces/ns/websites?fieldManager=kubectl\\u0026force=false","verb":"patch",' +
        '"user":{"username":"admin","groups":["system:masters","system:authenticated"]},"sourceIPs":["10.0.0.1"],' +
        '"userAgent":"kubectl/v1.37.2","requestReceivedTimestamp":"2026-01-02T03:04:05.123456Z","stageTimestamp":"2026-01-02T03:04:05.123456Z"}\n',
    );
  });

  it('writes impersonation, objectRef, a failure status with its details, objects and sorted annotations', () => {
    const line = encodeEvent(
      {
        ...base,
        user: {},
        impersonatedUser: { username: 'bob', uid: '42', groups: ['devs'], extra: { 'z.io/b': ['2'], 'a.io/a': ['1'] } },
        impersonationConstraint: 'impersonate:user-info',
        objectRef: { resource: 'websites', namespace: 'ns', name: 'kubia', apiGroup: 'g', apiVersion: 'v1', subresource: 'status' },
        responseStatus: {
          status: 'Failure',
          message: 'm',
          reason: 'NotFound',
          details: { kind: 'websites', name: 'kubia', group: 'g', causes: [{ field: 'f', reason: 'R' }] },
          code: 404,
        },
        requestObject: '{"a":1}',
        responseObject: '{"b":2}',
        annotations: new Map([
          ['z', '1'],
          ['authorization.k8s.io/reason', ''],
          ['authorization.k8s.io/decision', 'allow'],
        ]),
      },
      'ResponseComplete',
      base.requestReceivedTimestamp + 1_000_001,
    );
    expect(JSON.parse(line)).toMatchObject({ stage: 'ResponseComplete', stageTimestamp: '2026-01-02T03:04:06.123457Z' });
    expect(line).toContain(
      '"user":{},"impersonatedUser":{"username":"bob","uid":"42","groups":["devs"],"extra":{"a.io/a":["1"],"z.io/b":["2"]}},' +
        '"authenticationMetadata":{"impersonationConstraint":"impersonate:user-info"},"sourceIPs":["10.0.0.1"],"userAgent":"kubectl/v1.37.2",' +
        '"objectRef":{"resource":"websites","namespace":"ns","name":"kubia","apiGroup":"g","apiVersion":"v1","subresource":"status"},' +
        '"responseStatus":{"metadata":{},"status":"Failure","message":"m","reason":"NotFound","details":{"name":"kubia","group":"g","kind":"websites","causes":[{"reason":"R","field":"f"}]},"code":404},' +
        '"requestObject":{"a":1},"responseObject":{"b":2},',
    );
    expect(line).toMatch(/"annotations":\{"authorization.k8s.io\/decision":"allow","authorization.k8s.io\/reason":"","z":"1"\}\}\n$/);
    expect(line.indexOf('\n')).toBe(line.length - 1);
  });

  it('a success keeps only the code (metav1.Status metadata is never omitted)', () => {
    expect(encodeEvent({ ...base, responseStatus: { code: 201 } }, 'ResponseComplete', base.requestReceivedTimestamp)).toContain(
      '"responseStatus":{"metadata":{},"code":201}',
    );
  });
});

describe('jsonText', () => {
  it('keeps compact JSON, HTML-escaped as encoding/json compacts a RawMessage', () => {
    expect(jsonText('{"a":"<b>&\u2028"}')).toBe('{"a":"\\u003cb\\u003e\\u0026\\u2028"}');
  });
  it('puts indented JSON on one line', () => {
    expect(jsonText('{\n  "a": [1,\n 2]\n}')).toBe('{"a":[1,2]}');
  });
});

describe('microTime (metav1.MicroTime)', () => {
  it('has six fraction digits and Z', () => {
    expect(microTime(Date.UTC(1999, 11, 31, 23, 59, 59) * 1000 + 7)).toBe('1999-12-31T23:59:59.000007Z');
  });
  it('nowMicros follows the wall clock with microseconds', () => {
    const before = Date.now() * 1000;
    const t = nowMicros();
    expect(t).toBeGreaterThanOrEqual(before - 2000);
    expect(t).toBeLessThanOrEqual(Date.now() * 1000 + 2000);
    expect(Number.isInteger(t)).toBe(true);
  });
});

describe('sourceIPs (TestSourceIPs)', () => {
  it.each([
    ['no headers, no remote address', undefined, undefined, undefined, []],
    ['no headers, just the remote address', undefined, undefined, '1.2.3.4', ['1.2.3.4']],
    ['empty forwarded-for chain', ' ', undefined, '1.2.3.4', ['1.2.3.4']],
    ['invalid forwarded-for chain', 'garbage garbage values!', undefined, '1.2.3.4', ['1.2.3.4']],
    ['partially invalid forwarded-for chain', 'garbage garbage values!,4.5.6.7', undefined, '1.2.3.4', ['4.5.6.7', '1.2.3.4']],
    ['valid forwarded-for chain', '120.120.120.126,2.2.2.2,4.5.6.7', undefined, '1.2.3.4', ['120.120.120.126', '2.2.2.2', '4.5.6.7', '1.2.3.4']],
    ['forwarded-for chain ending with the remote address', '2.2.2.2,1.2.3.4', undefined, '1.2.3.4', ['2.2.2.2', '1.2.3.4']],
    ['invalid Real-Ip', undefined, 'garbage, just garbage!', '1.2.3.4', ['1.2.3.4']],
    ['valid Real-Ip', undefined, '2.2.2.2', '1.2.3.4', ['2.2.2.2', '1.2.3.4']],
    ['redundant Real-Ip', undefined, '1.2.3.4', '1.2.3.4', ['1.2.3.4']],
    ['Real-Ip after forwarded-for', '3.3.3.3', '2.2.2.2', '1.2.3.4', ['3.3.3.3', '2.2.2.2', '1.2.3.4']],
    ['Real-Ip already forwarded', '2.2.2.2', '2.2.2.2', '1.2.3.4', ['2.2.2.2', '1.2.3.4']],
    ['full redundancy', '1.2.3.4', '1.2.3.4', '1.2.3.4', ['1.2.3.4']],
    [
      'full ipv6',
      'aaaa:bbbb:cccc:dddd:eeee:ffff:0:1111',
      'abcd:ef01:2345:6789:abcd:ef01:2345:6789',
      '0:0:0:0:0:0:0:1',
      ['aaaa:bbbb:cccc:dddd:eeee:ffff:0:1111', 'abcd:ef01:2345:6789:abcd:ef01:2345:6789', '::1'],
    ],
    [
      'mixed ipv4 ipv6',
      'aaaa:bbbb:cccc:dddd:eeee:ffff:0:1111,  1.2.3.4',
      undefined,
      '0:0:0:0:0:0:0:1',
      ['aaaa:bbbb:cccc:dddd:eeee:ffff:0:1111', '1.2.3.4', '::1'],
    ],
    // Node reports an IPv4 client of a dual-stack socket IPv4-mapped; Go's String prints it dotted.
    ['an IPv4-mapped remote address', '1.2.3.4', undefined, '::ffff:1.2.3.4', ['1.2.3.4']],
  ] as [string, string | undefined, string | undefined, string | undefined, string[]][])('%s', (_name, forwardedFor, realIP, remote, expected) => {
    expect(sourceIPs(forwardedFor, realIP, remote)).toEqual(expected);
  });

  it.each([
    ['010.001.002.003', '10.1.2.3'],
    ['256.1.1.1', undefined],
    ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['fe80::1%eth0', undefined],
    ['example.com', undefined],
  ])('canonicalIP(%j) is %j (netutils.ParseIPSloppy, net.IP.String)', (text, want) => {
    expect(canonicalIP(text)).toBe(want);
  });
});
