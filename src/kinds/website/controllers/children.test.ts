import { describe, expect, it } from 'vitest';
import type { Website } from '../v1.js';
import { childLabels, DEFAULT_IMAGES, desiredDeployment, desiredService, selectorString } from './children.js';

const site = (over: { git?: Partial<Website['spec']['git']>; service?: Partial<Website['spec']['service']> } = {}): Website => ({
  apiVersion: 'extensions.example.com/v1',
  kind: 'Website',
  metadata: { name: 'kubia', namespace: 'team', uid: 'u-1', generation: 3 },
  spec: {
    replicas: 2,
    git: { repository: 'https://github.com/luksa/kubia-website-example.git', syncIntervalSeconds: 30, ...over.git },
    service: { type: 'NodePort', ...over.service },
  },
});

describe('desired children of a Website', () => {
  it('a Deployment <name>-website: nginx and git-sync sharing an emptyDir, labels, selector, controller ownerReference', () => {
    const d = desiredDeployment(site({ git: { branch: 'main' } }), DEFAULT_IMAGES);
    expect(d.metadata).toMatchObject({ name: 'kubia-website', namespace: 'team' });
    expect(d.metadata.labels).toEqual({
      'app.kubernetes.io/name': 'website',
      'app.kubernetes.io/instance': 'kubia',
      'app.kubernetes.io/managed-by': 'website-apiserver',
    });
    expect(d.metadata.ownerReferences).toEqual([
      { apiVersion: 'extensions.example.com/v1', kind: 'Website', name: 'kubia', uid: 'u-1', controller: true, blockOwnerDeletion: true },
    ]);
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'website', 'app.kubernetes.io/instance': 'kubia' });
    // The selector must match the pod labels, or the API server rejects the Deployment.
    expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    const [nginx, sync] = d.spec.template.spec.containers;
    expect(nginx?.image).toBe(DEFAULT_IMAGES.nginx);
    expect(sync?.image).toBe(DEFAULT_IMAGES.gitSync);
    expect(sync?.args).toEqual(
      expect.arrayContaining(['--repo=https://github.com/luksa/kubia-website-example.git', '--period=30s', '--ref=main', '--link=html']),
    );
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

  it('lets git-sync ride out about 30 s of failed syncs, then exit with its last log lines as the termination message', () => {
    const sync = (interval: number) => desiredDeployment(site({ git: { syncIntervalSeconds: interval } }), DEFAULT_IMAGES).spec.template.spec.containers[1];
    expect(sync(5)?.args).toContain('--max-failures=6');
    expect(sync(30)?.args).toContain('--max-failures=3');
    expect(sync(3600)?.args).toContain('--max-failures=3');
    expect(sync(5)?.terminationMessagePolicy).toBe('FallbackToLogsOnError');
  });

  it('without spec.secretRef mounts no credentials and sets no fsGroup', () => {
    const spec = desiredDeployment(site(), DEFAULT_IMAGES).spec.template.spec;
    expect(spec.volumes).toHaveLength(1);
    expect('securityContext' in spec).toBe(false);
    expect(spec.containers[1]?.args?.some((a) => /password|ssh/.test(a))).toBe(false);
    expect('env' in (spec.containers[1] ?? {})).toBe(false);
  });

  it('mounts spec.secretRef for git-sync: username and password file for an https URL', () => {
    const spec = desiredDeployment(site({ git: { repository: 'https://git.example.com/private.git', secretRef: { name: 'site-creds' } } }), DEFAULT_IMAGES).spec
      .template.spec;
    const sync = spec.containers[1];
    expect(spec.securityContext).toEqual({ fsGroup: 65533 });
    expect(spec.volumes).toContainEqual({ name: 'git-secret', secret: { secretName: 'site-creds', defaultMode: 0o440 } });
    expect(sync?.volumeMounts).toContainEqual({ name: 'git-secret', mountPath: '/etc/git-secret', readOnly: true });
    expect(sync?.args).toContain('--password-file=/etc/git-secret/password');
    expect(sync?.env).toEqual([{ name: 'GITSYNC_USERNAME', valueFrom: { secretKeyRef: { name: 'site-creds', key: 'username' } } }]);
    // nginx sees nothing of it.
    expect(spec.containers[0]?.volumeMounts.some((m) => m.name === 'git-secret')).toBe(false);
  });

  it('mounts spec.secretRef for git-sync: a key and known_hosts for ssh:// and scp-like URLs', () => {
    for (const gitRepo of ['ssh://git@git.example.com/site.git', 'git@github.com:luksa/kubia-website-example.git']) {
      const sync = desiredDeployment(site({ git: { repository: gitRepo, secretRef: { name: 'deploy-key' } } }), DEFAULT_IMAGES).spec.template.spec
        .containers[1];
      expect(sync?.args).toEqual(
        expect.arrayContaining([
          '--ssh-key-file=/etc/git-secret/ssh-privatekey',
          '--ssh-known-hosts=true',
          '--ssh-known-hosts-file=/etc/git-secret/known_hosts',
        ]),
      );
      expect(sync?.args?.some((a) => a.startsWith('--password-file'))).toBe(false);
      expect('env' in (sync ?? {})).toBe(false);
    }
  });

  it('a Service <name>-website of spec.serviceType on port 80 selecting the pods', () => {
    const s = desiredService(site({ service: { type: 'ClusterIP' } }));
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
