/**
 * @module migration/freeze
 * The write freeze on kube-apiserver's side of a move: a ValidatingWebhookConfiguration that sends every create,
 * update and delete of the CRD's objects (and their subresources) to this server's freeze webhook, which refuses
 * them with 429 and Retry-After: 1 (endpoints/migration-routes.ts). kube-apiserver passes both on, so client-go and
 * kubectl retry by themselves, up to 10 times: a freeze shorter than about 10 s costs a client a slower write, not
 * an error. (A ValidatingAdmissionPolicy cannot answer 429: its denials are 403 or 422, which nobody retries.)
 * Reads are not affected. Admission webhooks do not run for requests kube-aggregator proxies, so once the
 * group-version is served here the freeze no longer matters and is removed.
 */
import type { CrdInfo } from './crd-info.js';
import { objectPath } from './crd-info.js';
import type { Rest } from './rest.js';

const VWC_PATH = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

/** Service is where kube-apiserver reaches this server (the APIServices' and the webhook's target). */
export interface ServiceRef {
  namespace: string;
  name: string;
  port: number;
}

/** freezeName is the webhook configuration's name for a CRD. */
const freezeName = (crd: CrdInfo) => `website-apiserver-migration-${crd.name}`.slice(0, 253);

/** startFreeze creates (or keeps) the webhook configuration; `caBundle` is base64 PEM, as in an APIService. */
export async function startFreeze(kube: Rest, crd: CrdInfo, service: ServiceRef, caBundle: string): Promise<void> {
  const body = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: freezeName(crd), labels: { 'app.kubernetes.io/managed-by': 'website-apiserver-migrate' } },
    webhooks: [
      {
        name: 'freeze.migration.website-apiserver.example.com',
        clientConfig: { service: { ...service, path: '/migration/v1/admission/freeze' }, caBundle },
        rules: [
          { apiGroups: [crd.group], apiVersions: ['*'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: [crd.plural, `${crd.plural}/*`], scope: '*' },
        ],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: 5,
      },
    ],
  };
  const created = await kube.call('POST', VWC_PATH, body);
  if (created.status === 409) return;
  if (created.status !== 201) throw new Error(`creating the freeze webhook: ${created.status} ${JSON.stringify(created.body)}`);
}

/** endFreeze deletes the webhook configuration (absent is fine). */
export async function endFreeze(kube: Rest, crd: CrdInfo): Promise<void> {
  await kube.ok('DELETE', `${VWC_PATH}/${freezeName(crd)}`, undefined, undefined, [200, 202, 404]);
}

/**
 * dryRunWrite sends a dry-run update of one existing object through kube-apiserver and answers its status: 429 while
 * the freeze is in effect on kube's side (or this server's own freeze, once it serves the group-version), 200 when
 * the write would go through. undefined when there is no object to try it on.
 */
export async function dryRunWrite(
  kube: Rest,
  crd: CrdInfo,
  sample: { metadata: { namespace?: string; name: string } } | undefined,
): Promise<number | undefined> {
  if (!sample) return undefined;
  const path = `${objectPath(crd, sample.metadata.namespace, sample.metadata.name)}?dryRun=All`;
  const a = await kube.call(
    'PATCH',
    path,
    { metadata: { labels: { 'migration.website-apiserver.example.com/probe': 'dry-run' } } },
    'application/merge-patch+json',
  );
  return a.status;
}
