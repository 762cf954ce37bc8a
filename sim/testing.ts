/**
 * Helpers for tests that talk to a simulated cluster in-process: requests, a line reader for
 * watch / log-follow streams, and the control plane's fixtures several tests share.
 */
import type { SimKarmada } from './karmada.ts';
import { propagate } from './propagation.ts';

export interface Fetcher {
  fetch(req: Request): Promise<Response>;
}

export async function call(
  sim: Fetcher,
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (json !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const res = await sim.fetch(
    new Request(`http://sim${path}`, {
      ...rest,
      headers,
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    }),
  );
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** Reads newline-delimited frames from a streaming body. */
export class LineReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private buf = '';
  private readonly decoder = new TextDecoder();

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader();
  }

  /** Next line, or undefined at a clean end. Rejects when the stream errors or after `timeoutMs`. */
  async next(timeoutMs = 3000): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const nl = this.buf.indexOf('\n');
      if (nl >= 0) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        return line;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timeout waiting for a line');
      let timer: ReturnType<typeof setTimeout> | undefined;
      const r = await Promise.race([
        this.reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout waiting for a line')), left);
        }),
      ]).finally(() => clearTimeout(timer));
      if (r.done) return this.buf ? this.flushRest() : undefined;
      this.buf += this.decoder.decode(r.value, { stream: true });
    }
  }

  async json(timeoutMs?: number): Promise<any> {
    const l = await this.next(timeoutMs);
    return l === undefined ? undefined : JSON.parse(l);
  }

  private flushRest(): string {
    const s = this.buf;
    this.buf = '';
    return s;
  }

  async cancel(): Promise<void> {
    await this.reader.cancel();
  }
}

export async function openStream(
  sim: Fetcher,
  path: string,
  headers?: HeadersInit,
): Promise<{ res: Response; lines: LineReader }> {
  const res = await sim.fetch(new Request(`http://sim${path}`, { headers: headers ?? {} }));
  if (!res.body) throw new Error(`no body (status ${res.status})`);
  return { res, lines: new LineReader(res.body) };
}

const CLUSTER_ROLES = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
const CLUSTER_POLICIES = {
  group: 'policy.karmada.io',
  version: 'v1alpha1',
  resource: 'clusterpropagationpolicies',
};

/**
 * A ClusterRole (`reader` unless named, with `labels` if given) at the control plane, selected by a
 * ClusterPropagationPolicy of the same name to `clusters`, propagated: a cluster-scoped template with its
 * ClusterResourceBinding, Works and copies.
 */
export function propagateClusterRole(
  karmada: SimKarmada,
  clusters: string[],
  opts: { name?: string; labels?: Record<string, string> } = {},
): void {
  const name = opts.name ?? 'reader';
  karmada.create(CLUSTER_ROLES, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, ...(opts.labels ? { labels: opts.labels } : {}) },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
  } as never);
  karmada.create(CLUSTER_POLICIES, {
    apiVersion: 'policy.karmada.io/v1alpha1',
    kind: 'ClusterPropagationPolicy',
    metadata: { name },
    spec: {
      resourceSelectors: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name }],
      placement: { clusterAffinity: { clusterNames: clusters } },
    },
  } as never);
  propagate(karmada);
}
