import { describe, expect, it } from 'vitest';
import type { Website } from '../../apis/website/v1alpha1.js';
import { childLabels, DEFAULT_IMAGES, desiredDeployment, desiredService, selectorString } from './children.js';

const site = (spec: Partial<Website['spec']> = {}): Website => ({
  apiVersion: 'extensions.example.com/v1alpha1',
  kind: 'Website',
  metadata: { name: 'kubia', namespace: 'team', uid: 'u-1', generation: 3 },
  spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', replicas: 2, syncIntervalSeconds: 30, serviceType: 'NodePort', ...spec },
});

describe('desired children of a Website', () => {
  it('a Deployment <name>-website: nginx and git-sync sharing an emptyDir, labels, selector, controller ownerReference', () => {
    const d = desiredDeployment(site({ branch: 'main' }), DEFAULT_IMAGES);
    expect(d.metadata).toMatchObject({ name: 'kubia-website', namespace: 'team' });
    expect(d.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'website', 'app.kubernetes.io/instance': 'kubia', 'app.kubernetes.io/managed-by': 'website-apiserver' });
    expect(d.metadata.ownerReferences).toEqual([{ apiVersion: 'extensions.example.com/v1alpha1', kind: 'Website', name: 'kubia', uid: 'u-1', controller: true, blockOwnerDeletion: true }]);
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'website', 'app.kubernetes.io/instance': 'kubia' });
    // The selector must match the pod labels, or the API server rejects the Deployment.
    expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    const [nginx, sync] = d.spec.template.spec.containers;
    expect(nginx?.image).toBe(DEFAULT_IMAGES.nginx);
    expect(sync?.image).toBe(DEFAULT_IMAGES.gitSync);
    expect(sync?.args).toEqual(expect.arrayContaining(['--repo=https://github.com/luksa/kubia-website-example.git', '--period=30s', '--ref=main', '--link=html']));
    const volume = d.spec.template.spec.volumes[0]?.name;
    expect(d.spec.template.spec.volumes[0]).toEqual({ name: volume, emptyDir: {} });
    expect(nginx?.volumeMounts[0]).toMatchObject({ name: volume, mountPath: '/usr/share/nginx', readOnly: true });
    expect(sync?.volumeMounts[0]).toMatchObject({ name: volume, mountPath: '/git' });
    expect(nginx?.readinessProbe?.httpGet).toEqual({ path: '/', port: 'http' });
    expect(nginx?.resources.requests).toBeDefined();
  });

  it('leaves --ref out without a branch (the remote HEAD) and takes the images given', () => {
    const d = desiredDeployment(site(), { nginx: 'n:1', gitSync: 'g:2' });
    expect(d.spec.template.spec.containers[1]?.args?.some((a) => a.startsWith('--ref='))).toBe(false);
    expect(d.spec.template.spec.containers.map((c) => c.image)).toEqual(['n:1', 'g:2']);
  });

  it('a Service <name>-website of spec.serviceType on port 80 selecting the pods', () => {
    const s = desiredService(site({ serviceType: 'ClusterIP' }));
    expect(s.metadata).toMatchObject({ name: 'kubia-website', namespace: 'team', labels: childLabels(site()) });
    expect(s.spec).toEqual({
      type: 'ClusterIP',
      selector: { 'app.kubernetes.io/name': 'website', 'app.kubernetes.io/instance': 'kubia' },
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
    });
  });

  it('reports the selector in the form the scale subresource uses', () => {
    expect(selectorString(site())).toBe('app.kubernetes.io/instance=kubia,app.kubernetes.io/name=website');
  });
});
