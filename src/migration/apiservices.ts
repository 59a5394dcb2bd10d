/**
 * @module migration/apiservices
 * The switch of a CRD's group-versions between kube-apiserver's own handler and this server (docs/migration.md has
 * the facts from kube-aggregator this rests on):
 * - kube's crdregistration controller keeps an APIService `<version>.<group>` for each served CRD version, labelled
 *   `kube-aggregator.kubernetes.io/automanaged`, with no service (served locally). Its autoregister controller
 *   replaces the spec of a labelled APIService it wants, and never touches one without the label.
 * - So one merge patch that removes the label and sets the service takes the group-version over atomically: the
 *   aggregator's proxy handler swaps to the service as soon as it sees the update, and the Available condition it
 *   kept means no 503 in between.
 * - Going back is the reverse patch: the label back and no service; the controller then owns it again.
 */
import type { CrdInfo } from './crd-info.js';
import type { ServiceRef } from './freeze.js';
import type { Rest } from './rest.js';

const APISERVICE_PATH = '/apis/apiregistration.k8s.io/v1/apiservices';
const AUTOMANAGED = 'kube-aggregator.kubernetes.io/automanaged';

/** ApiService is the part of an APIService read here. */
export interface ApiService {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { service?: { namespace: string; name: string; port?: number } | null; caBundle?: string; group: string; version: string };
  status?: { conditions?: { type: string; status: string; reason?: string }[] };
}

export const apiServiceName = (crd: CrdInfo, version: string) => `${version}.${crd.group}`;

/** readApiService reads one APIService (undefined when absent). */
export async function readApiService(kube: Rest, name: string): Promise<ApiService | undefined> {
  const a = await kube.call<ApiService>('GET', `${APISERVICE_PATH}/${name}`);
  if (a.status === 404) return undefined;
  if (a.status !== 200) throw new Error(`reading APIService ${name}: ${a.status} ${JSON.stringify(a.body)}`);
  return a.body;
}

/** pointsAt tells whether an APIService sends its group-version to `service`. */
export function pointsAt(a: ApiService | undefined, service: ServiceRef): boolean {
  const s = a?.spec.service;
  return !!s && s.namespace === service.namespace && s.name === service.name && (s.port ?? 443) === service.port;
}

/** takeOver points `<version>.<group>` at this server's service, out of the autoregister controller's hands. */
export async function takeOver(kube: Rest, name: string, service: ServiceRef, caBundle: string): Promise<void> {
  await kube.ok(
    'PATCH',
    `${APISERVICE_PATH}/${name}`,
    { metadata: { labels: { [AUTOMANAGED]: null } }, spec: { service, caBundle, insecureSkipTLSVerify: false } },
    'application/merge-patch+json',
  );
}

/** giveBack makes `<version>.<group>` local again and hands it back to the autoregister controller. */
export async function giveBack(kube: Rest, name: string): Promise<void> {
  await kube.ok(
    'PATCH',
    `${APISERVICE_PATH}/${name}`,
    { metadata: { labels: { [AUTOMANAGED]: 'true' } }, spec: { service: null, caBundle: null, insecureSkipTLSVerify: false } },
    'application/merge-patch+json',
  );
}

/** isAvailable tells whether the APIService's Available condition is True (and why). */
export function availability(a: ApiService | undefined): { available: boolean; reason: string } {
  const c = a?.status?.conditions?.find((x) => x.type === 'Available');
  return { available: c?.status === 'True', reason: c?.reason ?? '' };
}
