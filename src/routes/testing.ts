/**
 * A fleet without a server, for the routes' own tests: every cluster is a function from the request it
 * gets to the answer it gives (or an UpstreamError: unreachable), and the test sees every request sent.
 * Test support only; no production module imports it.
 */
import { Hono } from 'hono';
import { parseRequestInfo, type RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import { type SendOptions, type UpstreamClient, UpstreamError } from './../upstreams/client.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import type { Target } from '../upstreams/fanout.ts';
import type { Membership } from '../upstreams/membership.ts';

export type Cluster = (req: {
  method: string;
  path: string;
  headers: Headers;
  body?: unknown;
}) => Response | 'unreachable' | Promise<Response | 'unreachable'>;

export interface FakeFleet {
  deps: FleetDeps;
  targets: Target[];
  /** every request sent, in order: `<cluster> <METHOD> <path>` */
  sent: string[];
}

function endpoint(name: string): ResolvedEndpoint {
  return {
    name,
    server: `http://${name}.invalid`,
    insecureSkipTLSVerify: false,
    timeoutMs: 1000,
  } as ResolvedEndpoint;
}

/** `clusters` in fleet order; `karmada`, when present, is the control plane (federation on). */
export function fakeFleet(clusters: Record<string, Cluster>, config: { strict?: boolean } = {}): FakeFleet {
  const sent: string[] = [];
  const names = Object.keys(clusters);
  const federation = names.includes('karmada');
  const targets: Target[] = names.map((n) => ({
    cluster: n,
    endpoint: endpoint(n),
    controlPlane: n === 'karmada',
  }));
  const client = {
    async send(ep: ResolvedEndpoint, opts: SendOptions): Promise<Response> {
      sent.push(`${ep.name} ${opts.method ?? 'GET'} ${opts.path}`);
      const r = await clusters[ep.name]!({
        method: opts.method ?? 'GET',
        path: opts.path,
        headers: new Headers(opts.headers),
        body: opts.body,
      });
      if (r === 'unreachable') throw new UpstreamError(ep.name, 'unreachable', 'connection refused');
      return r;
    },
    forwardable: (h: Headers | undefined) => new Headers(h),
    caller: undefined,
  } as unknown as UpstreamClient;
  const membership = {
    controlPlane: endpoint('karmada'),
    endpointFor: async (cs: string) => targets.find((t) => t.cluster === cs)?.endpoint,
    // as a static membership: every answer at hand (null: no such cluster)
    knownEndpoint: (cs: string) => targets.find((t) => t.cluster === cs)?.endpoint ?? null,
    members: async () =>
      targets
        .filter((t) => !t.controlPlane)
        .map((t) => ({ name: t.cluster, ready: true, endpoint: t.endpoint })),
  } as unknown as Membership;
  const deps = {
    config: { federation, strict: config.strict ?? false },
    membership,
    client,
    gzipResponses: false,
    maxConnectionsPerRequest: 6,
  } as unknown as FleetDeps;
  return { deps, targets, sent };
}

export function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

export function status(code: number, reason: string, message: string, details?: object): Response {
  return json({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details }, code);
}

/** Serves `route` for one request, the way the dispatcher calls it. */
export async function serve(
  route: (c: import('hono').Context, info: RequestInfo) => Promise<Response>,
  url: string,
  init?: RequestInit,
): Promise<Response> {
  const app = new Hono();
  app.all('*', (c) => {
    const u = new URL(c.req.url);
    return route(c, parseRequestInfo(c.req.method, u.pathname, u.searchParams));
  });
  return app.request(url, init);
}
