/**
 * @module migration/preflight
 * What a move needs before it changes anything, checked at once so that a missing permission or an unready server
 * is one clear message at the start rather than a failure halfway: this server ready, and the caller allowed (by
 * kube-apiserver's own SelfSubjectAccessReview) every call the move will make in the cluster.
 */
import { apiServiceName } from './apiservices.js';
import type { CrdInfo } from './crd-info.js';
import type { Rest } from './rest.js';

interface Check {
  verb: string;
  group: string;
  resource: string;
  name?: string;
}

/** checkReady fails unless this server's /readyz answers 200. */
export async function checkReady(here: Rest): Promise<void> {
  const a = await here.call('GET', '/readyz');
  if (a.status !== 200) throw new Error(`this server is not ready (/readyz answered ${a.status}): ${String(a.body).trim()}`);
}

/** checkAccess fails listing every permission the caller lacks for the move (`back`: the way back). */
export async function checkAccess(kube: Rest, crd: CrdInfo, versions: readonly string[], back: boolean): Promise<void> {
  const checks: Check[] = [
    { verb: 'get', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: crd.name },
    { verb: 'patch', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: crd.name },
    ...versions.flatMap((v) =>
      ['get', 'patch'].map((verb) => ({ verb, group: 'apiregistration.k8s.io', resource: 'apiservices', name: apiServiceName(crd, v) })),
    ),
  ];
  if (!back) {
    checks.push(
      { verb: 'list', group: crd.group, resource: crd.plural },
      { verb: 'watch', group: crd.group, resource: crd.plural },
      { verb: 'patch', group: crd.group, resource: crd.plural },
      { verb: 'create', group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' },
      { verb: 'delete', group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' },
    );
  }
  const missing: string[] = [];
  for (const c of checks) {
    const a = await kube.ok<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { verb: c.verb, group: c.group, resource: c.resource, ...(c.name ? { name: c.name } : {}) } },
    });
    if (a.body.status?.allowed !== true) missing.push(`${c.verb} ${c.resource}.${c.group}${c.name ? ` ${c.name}` : ''}`);
  }
  if (missing.length) throw new Error(`your kubeconfig may not: ${missing.join(', ')}`);
}
