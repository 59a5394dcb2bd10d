/**
 * @module manifests/cert-manager
 * The cert-manager objects of an install whose serving certificate cert-manager issues (the kustomize base, the
 * chart's `certManager` TLS mode): a self-signed Issuer, a CA Certificate, an Issuer of that CA, and the serving
 * Certificate into the Secret the pods mount, for the Service's DNS names. cainjector then fills the APIServices'
 * caBundle from the `cert-manager.io/inject-ca-from` annotation.
 */
import { SERVICE_NAME, SERVING_SECRET_NAME, servingCertificateSans, type K8sObject } from './render.js';
import { CA_VALIDITY_DAYS, LEAF_VALIDITY_DAYS } from '../certs/self-signed.js';

const LABELS = { 'app.kubernetes.io/name': SERVICE_NAME };

/** certManagerObjects: a self-signed Issuer, a CA Certificate, an Issuer of that CA, and the serving Certificate. */
export function certManagerObjects(ns: string): K8sObject[] {
  const meta = (name: string) => ({ name, namespace: ns, labels: { ...LABELS } });
  const selfSigned = `${SERVICE_NAME}-selfsigned`;
  const ca = `${SERVICE_NAME}-ca`;
  const sans = servingCertificateSans(ns);
  return [
    { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: meta(selfSigned), spec: { selfSigned: {} } },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: meta(ca),
      spec: {
        isCA: true,
        commonName: `${SERVICE_NAME}-ca.${ns}`,
        secretName: ca,
        duration: `${CA_VALIDITY_DAYS * 24}h`,
        privateKey: { algorithm: 'ECDSA', size: 256 },
        issuerRef: { name: selfSigned, kind: 'Issuer', group: 'cert-manager.io' },
      },
    },
    { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: meta(ca), spec: { ca: { secretName: ca } } },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: meta(SERVING_SECRET_NAME),
      spec: {
        secretName: SERVING_SECRET_NAME,
        commonName: sans[0],
        dnsNames: sans,
        usages: ['server auth', 'digital signature', 'key encipherment'],
        duration: `${LEAF_VALIDITY_DAYS * 24}h`,
        issuerRef: { name: ca, kind: 'Issuer', group: 'cert-manager.io' },
      },
    },
  ];
}
