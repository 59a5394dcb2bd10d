/**
 * The multi-language client suites (test/clients/) through kube-apiserver: the official Python client (current
 * and classic generation) and fabric8 (Java) reach our server only through the APIService, as the e2e admin user
 * (a bearer token), in namespaces that exist in the cluster. Same programs and checks as test/clients.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { defineClientSuites } from '../clients/suites.js';
import { kubectl, kubectlOk } from './harness/kubectl.js';
import { e2e } from './harness/state.js';

const env = e2e();
const admin = env.kubeconfig.admin;
const created: string[] = [];

afterAll(async () => {
  if (created.length) await kubectl(admin, ['delete', 'namespace', ...created, '--wait=false']);
});

defineClientSuites('through kube-apiserver', {
  kubeconfig: () => admin,
  namespace: async (id) => {
    const ns = `clients-${id}-${randomBytes(3).toString('hex')}`;
    await kubectlOk(admin, ['create', 'namespace', ns]);
    created.push(ns);
    return ns;
  },
});
