/**
 * @module cluster/authentication-config.test
 * kube-system/extension-apiserver-authentication as kube-apiserver publishes it (ClusterAuthenticationTrustController:
 * PEM bundles, and JSON arrays in strings for the requestheader-* lists), parsed and followed through an informer.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCA, type TestCert } from '../../test/helpers/auth-certs.js';
import { eventually, startFakeKube, type FakeKube, type KubeObject } from '../../test/helpers/fake-kube.js';
import { AUTH_CONFIGMAP_NAME, AUTH_CONFIGMAP_NAMESPACE, followAuthConfig, parseAuthConfig } from './authentication-config.js';
import type { DelegatedAuthConfig } from '../auth/delegated-config.js';

let clientCA: TestCert;
let clientCA2: TestCert;
let proxyCA: TestCert;
beforeAll(() => {
  clientCA = makeCA('kubernetes-ca');
  clientCA2 = makeCA('kubernetes-ca-next');
  proxyCA = makeCA('front-proxy-ca');
});

/** published is the configmap data of a kube-apiserver started with --requestheader-* flags. */
const published = (): Record<string, string> => ({
  'client-ca-file': clientCA.pem,
  'requestheader-client-ca-file': proxyCA.pem,
  'requestheader-allowed-names': '["front-proxy-client"]',
  'requestheader-username-headers': '["X-Remote-User"]',
  'requestheader-uid-headers': '["X-Remote-Uid"]',
  'requestheader-group-headers': '["X-Remote-Group"]',
  'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
});

describe('parseAuthConfig', () => {
  it('reads the client CA and every request-header setting', () => {
    const c = parseAuthConfig(published());
    expect(c.clientCA.pems).toEqual([clientCA.pem.trim()]);
    expect(c.requestHeader).toEqual({
      ca: expect.anything(),
      allowedNames: ['front-proxy-client'],
      usernameHeaders: ['X-Remote-User'],
      uidHeaders: ['X-Remote-Uid'],
      groupHeaders: ['X-Remote-Group'],
      extraHeaderPrefixes: ['X-Remote-Extra-'],
    });
    expect(c.requestHeader?.ca.pems).toEqual([proxyCA.pem.trim()]);
  });

  it('reads every CA of a bundle (CA rotation publishes old and new together)', () => {
    const c = parseAuthConfig({ ...published(), 'client-ca-file': `${clientCA.pem}${clientCA2.pem}` });
    expect(c.clientCA.size).toBe(2);
  });

  it('has no request-header settings without requestheader-client-ca-file', () => {
    const data = published();
    delete data['requestheader-client-ca-file'];
    expect(parseAuthConfig(data).requestHeader).toBeUndefined();
    expect(parseAuthConfig({ ...data, 'requestheader-client-ca-file': '' }).requestHeader).toBeUndefined();
  });

  it('has an empty client CA pool without client-ca-file', () => {
    const data = published();
    delete data['client-ca-file'];
    expect(parseAuthConfig(data).clientCA.size).toBe(0);
    expect(parseAuthConfig({}).clientCA.size).toBe(0);
  });

  it('reads an empty allowed-names list (any CN of the front-proxy CA) and missing lists as empty', () => {
    const c = parseAuthConfig({ 'requestheader-client-ca-file': proxyCA.pem, 'requestheader-allowed-names': '[]', 'requestheader-uid-headers': '' });
    expect(c.requestHeader).toMatchObject({ allowedNames: [], usernameHeaders: [], uidHeaders: [], groupHeaders: [], extraHeaderPrefixes: [] });
  });

  it('keeps several header names in order', () => {
    const c = parseAuthConfig({ ...published(), 'requestheader-username-headers': '["X-Remote-User","X-Forwarded-User"]' });
    expect(c.requestHeader?.usernameHeaders).toEqual(['X-Remote-User', 'X-Forwarded-User']);
  });

  it('throws on a list that is not a JSON array of strings, naming the key', () => {
    expect(() => parseAuthConfig({ ...published(), 'requestheader-allowed-names': 'front-proxy-client' })).toThrow();
    expect(() => parseAuthConfig({ ...published(), 'requestheader-group-headers': '{"a":1}' })).toThrow('requestheader-group-headers');
    expect(() => parseAuthConfig({ ...published(), 'requestheader-username-headers': '[1]' })).toThrow('requestheader-username-headers');
  });
});

describe('followAuthConfig', () => {
  const PATH = `/api/v1/namespaces/${AUTH_CONFIGMAP_NAMESPACE}/configmaps`;
  const configMap = (data: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: AUTH_CONFIGMAP_NAME, namespace: AUTH_CONFIGMAP_NAMESPACE, resourceVersion: '7' },
    data,
  });
  let kube: FakeKube;
  let source: ReturnType<typeof followAuthConfig>;
  const seen: DelegatedAuthConfig[] = [];
  const errorLogs: string[] = [];

  beforeAll(async () => {
    kube = await startFakeKube();
    kube.collection(PATH, 'ConfigMapList').items.set(AUTH_CONFIGMAP_NAME, configMap(published()));
    source = followAuthConfig(kube.kubeconfig, pino({ level: 'error' }, { write: (line: string) => void errorLogs.push(line) }));
    source.onChange((c) => seen.push(c));
    await source.whenLoaded;
    await eventually(() => kube.openWatches(PATH) === 1, 5000, 'configmap watch');
  });
  afterAll(async () => {
    await source?.stop();
    await kube?.close();
  });

  it('loads the configmap', () => {
    expect(source.loaded()).toBe(true);
    expect(source.current()?.requestHeader?.allowedNames).toEqual(['front-proxy-client']);
    expect(source.current()?.clientCA.pems).toEqual([clientCA.pem.trim()]);
    expect(kube.requests.some((r) => r.startsWith(`GET ${PATH}?`) && r.includes(`fieldSelector=metadata.name%3D${AUTH_CONFIGMAP_NAME}`))).toBe(true);
  });

  it('applies a change at once and tells its listeners', async () => {
    const before = seen.length;
    kube.emit(
      PATH,
      'MODIFIED',
      configMap({ ...published(), 'client-ca-file': `${clientCA.pem}${clientCA2.pem}`, 'requestheader-allowed-names': '["front-proxy-client","aggregator"]' }),
    );
    await eventually(() => seen.length > before, 3000, 'change listener');
    expect(source.current()?.clientCA.size).toBe(2);
    expect(source.current()?.requestHeader?.allowedNames).toEqual(['front-proxy-client', 'aggregator']);
  });

  it('keeps the previous settings when a change is malformed, and logs why', async () => {
    const good = source.current();
    const count = seen.length;
    kube.emit(PATH, 'MODIFIED', configMap({ ...published(), 'requestheader-allowed-names': 'not json' }));
    await eventually(() => errorLogs.some((l) => l.includes('malformed')), 3000, 'error log');
    expect(source.current()).toBe(good);
    expect(seen.length).toBe(count);
    expect(source.loaded()).toBe(true);
  });
});
