/**
 * The control URL's HTTP side, shared by the simulated clusters' (simcontrol.ts) and the real bed's
 * (test/real/control.ts): `POST <url>/<op>` with a JSON body, the op's answer as JSON, and
 * `{ "error": … }` with status 400 for an unknown op, a bad body or an op that fails. The ops, and the
 * resources they may name, are each side's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ControlArgs = Record<string, unknown> & {
  cluster?: string;
  resource?: string;
  ns?: string;
  name?: string;
};

/** An op answers a value (sync for the simulator) or a promise of one (the real bed's API calls). */
export type ControlOp = (a: ControlArgs) => unknown;

/** The resources the Go tests name, by plural; the real bed also needs each kind (its objects' `kind`). */
export const CONTROL_RESOURCES: Record<
  string,
  { group: string; version: string; resource: string; kind: string }
> = {
  configmaps: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' },
  pods: { group: '', version: 'v1', resource: 'pods', kind: 'Pod' },
  namespaces: { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace' },
  deployments: { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' },
  leases: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease' },
  widgets: { group: 'example.fleet.io', version: 'v1', resource: 'widgets', kind: 'Widget' },
  gadgets: { group: 'gadgets.fleet.io', version: 'v1', resource: 'gadgets', kind: 'Gadget' },
};

export interface ControlServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `ops` on a loopback port the OS picks; `onClose` runs before the server closes. */
export async function serveControl(
  ops: Record<string, ControlOp>,
  where: string,
  onClose?: () => void,
): Promise<ControlServer> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => {
      body += d;
    });
    req.on('end', () => {
      const answer = (status: number, out: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(out));
      };
      const op = ops[(req.url ?? '').replace(/^\//, '')];
      // one path for sync and async ops, and for a body that is no JSON: each failure is the caller's 400
      new Promise<unknown>((resolve) => {
        if (!op || req.method !== 'POST') throw new Error(`no op ${req.method} ${req.url}${where}`);
        resolve(op(body ? (JSON.parse(body) as ControlArgs) : {}));
      }).then(
        (out) => answer(200, out ?? null),
        (e) => answer(400, { error: (e as Error).message }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        onClose?.();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** What `list` answers for one object of one cluster (the Go tests compare these across clusters). */
export function controlListEntry(
  cluster: string,
  o: { metadata: Record<string, any>; data?: unknown },
): Record<string, unknown> {
  return {
    cluster,
    name: o.metadata.name,
    namespace: o.metadata.namespace,
    resourceVersion: o.metadata.resourceVersion,
    labels: o.metadata.labels ?? {},
    annotations: o.metadata.annotations ?? {},
    data: o.data ?? null,
  };
}
