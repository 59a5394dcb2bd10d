import { describe, expect, it } from 'vitest';
import { websiteDefinition, websiteSchema, type Website } from './v1alpha1.js';

const site = (spec: Partial<Website['spec']>): Website => ({
  apiVersion: 'extensions.example.com/v1alpha1',
  kind: 'Website',
  metadata: { name: 'w', namespace: 'ns' },
  spec: { gitRepo: 'https://git.example.com/site.git', replicas: 1, syncIntervalSeconds: 60, serviceType: 'NodePort', ...spec },
});
const errors = (spec: Partial<Website['spec']>) => (websiteDefinition.validate?.(site(spec), undefined) ?? []).map((e) => e.message);

describe('Website spec.secretRef', () => {
  it('is accepted for http(s), ssh:// and scp-like URLs', () => {
    for (const gitRepo of [
      'https://git.example.com/site.git',
      'http://10.0.0.1:8080/site.git',
      'ssh://git@git.example.com/site.git',
      'git@github.com:o/r.git',
    ]) {
      expect(errors({ gitRepo, secretRef: { name: 'site-creds' } }), gitRepo).toEqual([]);
    }
  });

  it('names a Secret: a DNS-1123 subdomain', () => {
    expect(errors({ secretRef: { name: 'Site_Creds' } })).toEqual([
      expect.stringMatching(/^spec\.secretRef\.name: Invalid value: "Site_Creds": a lowercase RFC 1123 subdomain/),
    ]);
  });

  it('is refused with a git:// URL, which has no authentication', () => {
    expect(errors({ gitRepo: 'git://git.example.com/site.git', secretRef: { name: 'creds' } })).toEqual([
      expect.stringMatching(/^spec\.secretRef: Invalid value: .*git:\/\/ URLs have no authentication/),
    ]);
  });

  it('is described in the schema (kubectl explain)', () => {
    const spec = websiteSchema.properties?.['spec'];
    const ref = spec?.properties?.['secretRef'];
    expect(ref?.description).toMatch(/username and password.*ssh-privatekey and known_hosts/s);
    expect(ref?.required).toEqual(['name']);
    expect(ref?.properties?.['name']?.description).toBeTruthy();
  });
});
