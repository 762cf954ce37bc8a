/**
 * The upstream client: every request the fleet sends to a cluster goes through `send`.
 *
 * It owns header hygiene (hop-by-hop headers, the caller's credentials and any incoming impersonation
 * never cross), the fleet's own credential, the caller's identity as Impersonate-* headers, and the
 * per-request timeout (until response headers: watch and log streams are long-lived by design).
 */
import { type Identity, impersonationHeaders } from '../auth/identity.ts';
import type { ResolvedEndpoint } from './endpoint.ts';
import { HeadersTimeoutError, type Transport } from './transport.ts';

/** RFC 9110 §7.6.1 hop-by-hop headers, plus those a proxy must never relay. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** Headers that carry the caller's credentials or identity claims: never forwarded as received. */
function isCredentialHeader(name: string): boolean {
  return (
    name === 'authorization' ||
    name === 'cookie' ||
    name.startsWith('impersonate-') ||
    name.startsWith('x-remote-') ||
    name === 'cf-access-jwt-assertion'
  );
}

export type UpstreamFailure = 'unreachable' | 'timeout';

export class UpstreamError extends Error {
  constructor(
    readonly cluster: string,
    readonly kind: UpstreamFailure,
    readonly detail: string,
  ) {
    super(
      kind === 'timeout'
        ? `cluster ${cluster}: no response within the timeout (${detail})`
        : `cluster ${cluster}: ${detail}`,
    );
    this.name = 'UpstreamError';
  }
}

export interface SendOptions {
  method: string;
  /** path and query relative to the endpoint's server, starting with '/' */
  path: string;
  /** the caller's headers (filtered here) or headers the fleet builds */
  headers?: Headers;
  body?: ReadableStream<Uint8Array> | Uint8Array | string | null;
  /** aborts the upstream request (the caller went away) */
  signal?: AbortSignal;
  identity?: Identity;
}

export function forwardableRequestHeaders(incoming: Headers | undefined): Headers {
  const out = new Headers();
  if (!incoming) return out;
  const connectionListed = new Set(
    (incoming.get('connection') ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  incoming.forEach((value, key) => {
    if (HOP_BY_HOP.has(key) || connectionListed.has(key) || isCredentialHeader(key)) return;
    out.append(key, value);
  });
  return out;
}

/** Response headers minus hop-by-hop ones. Content-Length stays: the body is relayed intact. */
export function forwardableResponseHeaders(upstream: Headers): Headers {
  const out = new Headers();
  const connectionListed = new Set(
    (upstream.get('connection') ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  upstream.forEach((value, key) => {
    if (HOP_BY_HOP.has(key) || connectionListed.has(key)) return;
    out.append(key, value);
  });
  return out;
}

function describe(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e.message ?? String(err)} (${cause})` : (e?.message ?? String(err));
}

export class UpstreamClient {
  constructor(private readonly transport: Transport) {}

  async send(endpoint: ResolvedEndpoint, opts: SendOptions): Promise<Response> {
    const headers = forwardableRequestHeaders(opts.headers);
    // Content-Length stays only for a body relayed as received; a body the fleet built gets its own
    if (!(opts.body instanceof ReadableStream)) headers.delete('content-length');
    const token = endpoint.token?.();
    if (token) headers.set('Authorization', `Bearer ${token}`);
    for (const [k, v] of impersonationHeaders(opts.identity)) headers.append(k, v);

    try {
      return await this.transport.send(endpoint, {
        method: opts.method,
        url: endpoint.server + opts.path,
        headers,
        body: opts.body ?? null,
        signal: opts.signal,
        timeoutMs: endpoint.timeoutMs,
      });
    } catch (err) {
      if (err instanceof HeadersTimeoutError)
        throw new UpstreamError(endpoint.name, 'timeout', `${endpoint.timeoutMs / 1000}s`);
      if (opts.signal?.aborted) throw err;
      throw new UpstreamError(endpoint.name, 'unreachable', describe(err));
    }
  }
}
