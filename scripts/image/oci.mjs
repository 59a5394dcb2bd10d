/**
 * @module scripts/image/oci
 * Writes a container image as an OCI image-layout archive (a tar holding `oci-layout`, `index.json` and
 * sha256-addressed blobs: one layer, its config, its manifest) from a folder that is the image's root file system.
 * No registry and no container engine are involved: `ctr images import`, `podman load` and `skopeo copy
 * oci-archive:` all read the result. The layer is made by GNU tar with fixed owners, times and order, so the same
 * folder gives the same digest.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * @typedef {object} ImageConfig the runtime part of an OCI image config
 * @property {string[]} [Entrypoint]
 * @property {string[]} [Cmd]
 * @property {string[]} [Env]
 * @property {string} [User]
 * @property {string} [WorkingDir]
 * @property {Record<string, object>} [ExposedPorts] e.g. `{ '8443/tcp': {} }`
 * @property {Record<string, object>} [Volumes] e.g. `{ '/data': {} }`
 * @property {Record<string, string>} [Labels]
 */

/** @param {Buffer} b */
const sha256 = (b) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/**
 * writeOciArchive writes `out`, an OCI layout archive of one image whose single layer is `rootfs`.
 * @param {{rootfs: string, config: ImageConfig, ref: string, out: string}} o `ref` is the full reference
 *   (`name:tag`) the image is imported as
 * @returns {{digest: string, bytes: number}} the manifest digest and the archive's size
 */
export function writeOciArchive(o) {
  const work = mkdtempSync(join(tmpdir(), 'oci-'));
  try {
    const layout = join(work, 'layout');
    const blobs = join(layout, 'blobs', 'sha256');
    mkdirSync(blobs, { recursive: true });
    /** @param {Buffer} b */
    const blob = (b) => {
      const digest = sha256(b);
      writeFileSync(join(blobs, digest.slice('sha256:'.length)), b);
      return { digest, size: b.length };
    };

    // Uncompressed: the archive stays on this machine, and a plain tar layer's digest is also its diff ID.
    const layerFile = join(work, 'layer.tar');
    execFileSync('tar', [
      '--create',
      '--file',
      layerFile,
      '--directory',
      o.rootfs,
      '--sort=name',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--mtime=@0',
      '--format=posix',
      '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
      '.',
    ]);
    const layer = blob(readFileSync(layerFile));
    const config = blob(
      Buffer.from(
        JSON.stringify({
          architecture: 'amd64',
          os: 'linux',
          config: o.config,
          rootfs: { type: 'layers', diff_ids: [layer.digest] },
          history: [{ created_by: 'website-apiserver scripts/image (offline build)' }],
        }),
      ),
    );
    const manifest = blob(
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
          layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layer }],
        }),
      ),
    );
    const tag = o.ref.slice(o.ref.lastIndexOf(':') + 1);
    writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    writeFileSync(
      join(layout, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: [
          {
            mediaType: 'application/vnd.oci.image.manifest.v1+json',
            ...manifest,
            // containerd names the imported image after io.containerd.image.name; other tools read the OCI tag.
            annotations: { 'io.containerd.image.name': o.ref, 'org.opencontainers.image.ref.name': tag },
          },
        ],
      }),
    );
    mkdirSync(dirname(o.out), { recursive: true });
    const tmp = `${o.out}.tmp`;
    execFileSync('tar', ['--create', '--file', tmp, '--directory', layout, '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '.']);
    renameSync(tmp, o.out);
    return { digest: manifest.digest, bytes: statSync(o.out).size };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
