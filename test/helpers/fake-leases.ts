/**
 * A stand-in for kube-apiserver's coordination.k8s.io/v1 Lease endpoints over plain HTTP on 127.0.0.1, for the leader
 * election tests: GET / POST / PUT of /apis/coordination.k8s.io/v1/namespaces/{ns}/leases[/{name}] with
 * resourceVersion conflicts, and MicroTime validated as strictly as the real apiserver does (6 fractional digits).
 * Several endpoints (one HTTP listener each) share one store, so each elector can be cut off on its own.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface LeaseObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion: string; uid?: string; labels?: Record<string, string>; [k: string]: unknown };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
    [k: string]: unknown;
  };
}

/** 'up' answers; 'reset' drops the connection (like a refused or broken connection); 'hang' never answers
 * (like a network partition: the client has to give up on its own). */
export type EndpointMode = 'up' | 'reset' | 'hang';

export interface LeaseEndpoint {
  /** index of this endpoint, as recorded in `FakeLeases.writes`. */
  readonly index: number;
  readonly kubeconfig: KubeConfig;
  mode: EndpointMode;
}

/** Write is one POST or PUT as it arrived, with the status it got. */
export interface Write {
  endpoint: number;
  method: 'POST' | 'PUT';
  path: string;
  body: string;
  code: number;
}

export interface FakeLeases {
  /** endpoint opens another listener onto the shared store. */
  endpoint(): Promise<LeaseEndpoint>;
  /** get returns a copy of the stored Lease. */
  get(namespace: string, name: string): LeaseObject | undefined;
  /** put stores a Lease as another client would (new resourceVersion), returning what was stored. */
  put(obj: Omit<LeaseObject, 'metadata'> & { metadata: Partial<LeaseObject['metadata']> & { name: string; namespace: string } }): LeaseObject;
  writes: Write[];
  /** requestCount counts every request received; busy counts those received and not yet answered (hung ones
   * excluded). Tests use both to wait until the clients have gone quiet. */
  requestCount(): number;
  busy(): number;
  close(): Promise<void>;
}

const PATH = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/]+))?$/;
// The apiserver parses MicroTime with Go's RFC3339Micro layout: exactly six fractional digits.
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/;

function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

export async function startFakeLeases(): Promise<FakeLeases> {
  const store = new Map<string, LeaseObject>();
  const servers: Server[] = [];
  const hung = new Set<ServerResponse>();
  const writes: Write[] = [];
  let rv = 1000;
  let received = 0;
  let busy = 0;

  const key = (ns: string, name: string) => `${ns}/${name}`;
  const copy = <T>(v: T): T => structuredClone(v);
  const stamp = (obj: LeaseObject): LeaseObject => {
    const stored = copy({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } });
    store.set(key(stored.metadata.namespace, stored.metadata.name), stored);
    return copy(stored);
  };

  // Returns an error Status when the body is not a Lease the apiserver would accept for this path.
  const invalid = (body: LeaseObject, ns: string, name: string | undefined) => {
    if (body?.kind !== undefined && body.kind !== 'Lease') return status(400, 'BadRequest', `wrong kind ${body.kind}`);
    if (body?.metadata?.namespace !== undefined && body.metadata.namespace !== ns)
      return status(400, 'BadRequest', 'the namespace of the object does not match the namespace on the request');
    if (name !== undefined && body?.metadata?.name !== name) return status(400, 'BadRequest', 'the name of the object does not match the name on the URL');
    for (const f of ['acquireTime', 'renewTime'] as const) {
      const v = body.spec?.[f];
      if (v !== undefined && (typeof v !== 'string' || !MICRO_TIME.test(v))) {
        return status(
          400,
          'BadRequest',
          `Lease in version "v1" cannot be handled as a Lease: parsing time ${JSON.stringify(v)} as "2006-01-02T15:04:05.000000Z07:00"`,
        );
      }
    }
    return undefined;
  };

  function handle(index: number, ep: LeaseEndpoint, req: IncomingMessage, res: ServerResponse) {
    received++;
    if (ep.mode === 'reset') {
      req.socket.destroy();
      return;
    }
    if (ep.mode === 'hang') {
      hung.add(res);
      res.on('close', () => hung.delete(res));
      return;
    }
    busy++;
    res.on('close', () => busy--);
    const json = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://x');
    const m = PATH.exec(url.pathname);
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      if (!m) return json(404, status(404, 'NotFound', 'the server could not find the requested resource'));
      const ns = decodeURIComponent(m[1]!);
      const name = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
      const current = name === undefined ? undefined : store.get(key(ns, name));
      const notFound = () => json(404, status(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`));
      const write = (code: number, body: unknown) => {
        writes.push({ endpoint: index, method: req.method as 'POST' | 'PUT', path: url.pathname, body: raw, code });
        json(code, body);
      };
      if (req.method === 'GET' && name !== undefined) return current ? json(200, copy(current)) : notFound();
      if (req.method === 'POST' && name === undefined) {
        const body = JSON.parse(raw) as LeaseObject;
        const bad = invalid(body, ns, undefined);
        if (bad) return write(400, bad);
        if (store.has(key(ns, body.metadata.name)))
          return write(409, {
            ...status(409, 'AlreadyExists', `leases.coordination.k8s.io "${body.metadata.name}" already exists`),
            details: { name: body.metadata.name, group: 'coordination.k8s.io', kind: 'leases' },
          });
        const created = stamp({
          ...body,
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { ...body.metadata, namespace: ns, uid: `uid-${rv}` },
        });
        return write(201, created);
      }
      if (req.method === 'PUT' && name !== undefined) {
        const body = JSON.parse(raw) as LeaseObject;
        const bad = invalid(body, ns, name);
        if (bad) return write(400, bad);
        if (!current) return write(404, status(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`));
        // Stricter than the apiserver (which allows an unconditional update): the elector must always send one.
        if (!body.metadata.resourceVersion)
          return write(422, status(422, 'Invalid', 'metadata.resourceVersion: Required value (fake: the elector must send it)'));
        if (body.metadata.resourceVersion !== current.metadata.resourceVersion) {
          return write(
            409,
            status(
              409,
              'Conflict',
              `Operation cannot be fulfilled on leases.coordination.k8s.io "${name}": the object has been modified; please apply your changes to the latest version and try again`,
            ),
          );
        }
        return write(
          200,
          stamp({ ...body, apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...body.metadata, namespace: ns, uid: current.metadata.uid } }),
        );
      }
      json(405, status(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`));
    });
  }

  return {
    async endpoint() {
      const index = servers.length;
      const ep = { index, mode: 'up' as EndpointMode, kubeconfig: new KubeConfig() };
      const server = createServer((req, res) => handle(index, ep, req, res));
      servers.push(server);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const { port } = server.address() as AddressInfo;
      // client-node refuses http:// unless TLS verification is skipped (DEPENDENCIES.md §2).
      ep.kubeconfig.loadFromOptions({
        clusters: [{ name: 'fake', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
        users: [{ name: 'fake' }],
        contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
        currentContext: 'fake',
      });
      return ep;
    },
    get: (ns, name) => {
      const v = store.get(key(ns, name));
      return v && copy(v);
    },
    put: (obj) => stamp({ ...obj, metadata: { ...obj.metadata, resourceVersion: '' } }),
    writes,
    requestCount: () => received,
    busy: () => busy,
    async close() {
      for (const res of hung) res.destroy();
      for (const s of servers) s.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    },
  };
}
