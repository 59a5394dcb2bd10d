/**
 * @module storage/etcd-client-options.test
 * etcd3's options from the --etcd-* (and migrate's --kube-etcd-*) files: a client certificate is presented whether
 * or not a CA is given, and plain http needs no credentials.
 */
import { rootCertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { etcdClientOptions } from './etcd-storage.js';

const buf = (s: string) => Buffer.from(s);

describe('etcdClientOptions', () => {
  it('gives no credentials without any TLS file', () => {
    expect(etcdClientOptions(['http://127.0.0.1:2379'], undefined)).toEqual({ hosts: ['http://127.0.0.1:2379'] });
    expect(etcdClientOptions(['http://127.0.0.1:2379'], {})).toEqual({ hosts: ['http://127.0.0.1:2379'] });
  });

  it('checks the servers against the given CA and presents the client certificate', () => {
    const o = etcdClientOptions(['https://etcd:2379'], { ca: buf('CA'), cert: buf('CERT'), key: buf('KEY') });
    expect(o.credentials).toEqual({ rootCertificate: buf('CA'), certChain: buf('CERT'), privateKey: buf('KEY') });
  });

  it('presents a client certificate without a CA too, checking the servers against the system roots', () => {
    const o = etcdClientOptions(['https://etcd:2379'], { cert: buf('CERT'), key: buf('KEY') });
    expect(o.credentials?.certChain).toEqual(buf('CERT'));
    expect(o.credentials?.privateKey).toEqual(buf('KEY'));
    expect(o.credentials?.rootCertificate.toString()).toBe(rootCertificates.join('\n'));
  });
});
