/**
 * The upstream client: every request the fleet sends to a cluster goes through `send`.
 *
 * It owns header hygiene (hop-by-hop headers, the caller's credentials and any incoming impersonation
 * never cross), the fleet's own credential, the caller's identity as Impersonate-* headers, and the
 * per-request timeout (until response headers: watch and log streams are long-lived by design).
 */
import type { UpstreamIdentity } from '../auth/identity.ts';
import { headerPairs, headersOf, insertPair, type Pairs, trimValue } from '../request/headers.ts';
import { parseTraceparent } from '../util/trace.ts';
import { servedFromCache } from './cache/shared.ts';
import { callSignal } from './call-signal.ts';
import { bearer, type Credentials, identityLines } from './credentials.ts';
import type { ResolvedEndpoint } from './endpoint.ts';
import { HeadersTimeoutError, type Transport, type UpstreamRequest } from './transport.ts';

/** RFC 9110 §7.6.1 hop-by-hop headers, plus those a proxy must never relay. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
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

export { CALLS_PER_SIGNAL, callSignal } from './call-signal.ts';
export type { Credentials } from './credentials.ts';

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
  /** an upgrade (exec, attach, port-forward): Upgrade is kept and Connection says so */
  upgrade?: boolean;
  /** send through this transport instead of the platform's (the Node entry's socket-splicing upgrade relay) */
  via?: Transport;
  /** the body is read by pulling (a merged list's source): see UpstreamRequest.pulled */
  pulled?: boolean;
}

/** The value of `name` among entries (lowercased, combined: at most one entry per name but Set-Cookie). */
function pairValue(p: Pairs, name: string): string | undefined {
  for (let i = 0; i < p.length; i += 2) if (p[i] === name) return p[i + 1];
  return undefined;
}

/**
 * The header names a Connection value lists (lowercased) besides hop-by-hop ones (dropped anyway), or
 * undefined for none: `keep-alive`, what clients and Node's servers send, costs no Set.
 */
export function connectionListed(conn: string): Set<string> | undefined {
  let out: Set<string> | undefined;
  for (const s of conn.split(',')) {
    const name = s.trim().toLowerCase();
    if (!name || HOP_BY_HOP.has(name)) continue;
    if (out) out.add(name);
    else out = new Set([name]);
  }
  return out;
}

/**
 * Entries minus hop-by-hop ones, those the Connection header lists, (`credentials`) credential ones, those
 * named in `drop` or starting with one of `prefixes`, and (`dropLength`) Content-Length.
 */
function forwardablePairs(
  p: Pairs,
  credentials: boolean,
  drop?: ReadonlySet<string>,
  prefixes?: readonly string[],
  dropLength?: boolean,
): Pairs {
  const conn = pairValue(p, 'connection');
  const listed = conn ? connectionListed(conn) : undefined;
  const out: Pairs = [];
  for (let i = 0; i < p.length; i += 2) {
    const key = p[i]!;
    if (HOP_BY_HOP.has(key) || listed?.has(key) || (credentials && isCredentialHeader(key))) continue;
    if (
      drop?.has(key) ||
      (prefixes?.length && prefixes.some((x) => key.startsWith(x))) ||
      (dropLength && key === 'content-length')
    )
      continue;
    // as Headers#append takes a combined value (", " between two lines, one of them empty, is trimmed)
    out.push(key, trimValue(p[i + 1]!));
  }
  return out;
}

/**
 * Entries as the Headers the client hands on (to routes, and to a transport given by the caller, which
 * reads the entries as they are): a real Headers, unless the runtime installed a cheaper list that reads
 * as one (Node: src/upstreams/pair-headers.ts, where an undici Headers costs a validation and a sorted
 * copy per line; workerd's Headers are the runtime's own). The entries are the list's from then on.
 */
let entriesHeaders: (p: Pairs) => Headers = headersOf;

/** Installed by the Node side of the platform seam (src/platform/node.ts). */
export function useLazyHeaders(f: (p: Pairs) => Headers): void {
  entriesHeaders = f;
}

export function forwardableRequestHeaders(incoming: Headers | undefined): Headers {
  return entriesHeaders(incoming ? forwardablePairs(headerPairs(incoming), true) : []);
}

/** Entries without `name` (lowercased), in place. */
function dropPair(p: Pairs, name: string): void {
  for (let i = p.length - 2; i >= 0; i -= 2) if (p[i] === name) p.splice(i, 2);
}

/** `name` (lowercased) set to `value`, in place, keeping the entries sorted, as Headers#set does. */
function setPair(p: Pairs, name: string, value: string): void {
  dropPair(p, name);
  insertPair(p, name, trimValue(value));
}

/**
 * An upgrade request (exec, attach, port-forward) keeps the upgrade itself: `Upgrade` as sent and
 * `Connection: Upgrade`. Sec-WebSocket-* and X-Stream-Protocol-Version are end-to-end headers and pass
 * unchanged anyway; credentials and impersonation follow the same rules as any request.
 */
function keepUpgrade(p: Pairs, incoming: Headers | undefined): void {
  const upgrade = incoming?.get('upgrade');
  if (!upgrade) return;
  setPair(p, 'upgrade', upgrade);
  setPair(p, 'connection', 'Upgrade');
}

/** Response headers minus hop-by-hop ones. Content-Length stays: the body is relayed intact. */
export function forwardableResponseHeaders(upstream: Headers): Headers {
  return headersOf(forwardablePairs(headerPairs(upstream), false));
}

function describe(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  const cause = e?.cause?.code ?? e?.cause?.message;
  return cause ? `${e.message ?? String(err)} (${cause})` : (e?.message ?? String(err));
}

/**
 * One caller's side of every upstream call: the identity that goes upstream, headers that carry identity
 * claims in this configuration (never forwarded), and who wants to hear about each answer (audit).
 */
export interface CallerBinding {
  as: UpstreamIdentity;
  /** lowercased request header names to drop besides the built-in credential headers */
  dropHeaders?: ReadonlySet<string>;
  /** lowercased header name prefixes to drop (configured front-proxy extras) */
  dropHeaderPrefixes?: readonly string[];
  /** told the status of every upstream answer, or 0 when the cluster could not be reached */
  onAnswer?: (cluster: string, code: number) => void;
  /** the caller's W3C trace context (`traceparent`), sent on every upstream call of this request */
  traceparent?: string;
}

/** Told of every upstream call the fleet makes, whoever it is for (the fleet's metrics). */
export interface UpstreamObserver {
  call(cluster: string, code: number | undefined, seconds: number, failure?: string, message?: string): void;
}

export class UpstreamClient {
  constructor(
    private readonly transport: Transport,
    private readonly binding?: CallerBinding,
    private readonly observer?: UpstreamObserver,
  ) {}

  /**
   * A client for one request: every call it sends carries this caller's identity, the only way an
   * identity goes upstream. The app hands routes only such a client, so no route can forget the caller.
   */
  forCaller(binding: CallerBinding): UpstreamClient {
    return new UpstreamClient(this.transport, binding, this.observer);
  }

  /** The identity this client is bound to (undefined: the fleet's own client). */
  get caller(): UpstreamIdentity | undefined {
    return this.binding?.as;
  }

  /** The request headers this client would forward (credentials and identity claims removed). */
  forwardable(incoming: Headers | undefined): Headers {
    return entriesHeaders(this.forwardableEntries(incoming));
  }

  private forwardableEntries(incoming: Headers | undefined, dropLength?: boolean): Pairs {
    const b = this.binding;
    return incoming
      ? forwardablePairs(headerPairs(incoming), true, b?.dropHeaders, b?.dropHeaderPrefixes, dropLength)
      : [];
  }

  /**
   * What authenticates a call to `endpoint` as this client's caller: the Authorization value (the fleet's
   * token, or the caller's own in passthrough mode) and the identity header lines (one per group). For
   * callers that dial the upstream themselves (the Node upgrade relay); `send` uses it too.
   */
  credentials(endpoint: ResolvedEndpoint): Credentials {
    const as: UpstreamIdentity | undefined = this.binding?.as;
    if (as?.mode === 'passthrough') {
      // the caller's own credential instead of the fleet's; a client certificate would authenticate the
      // fleet instead (kube tries x509 before tokens), so such an endpoint must never get here
      if (endpoint.certPem || endpoint.mtlsBinding)
        throw new UpstreamError(
          endpoint.name,
          'unreachable',
          "upstreamIdentity.mode passthrough cannot reach a cluster with the fleet's client certificate",
        );
      return { authorization: as.authorization, headerLines: identityLines(as.impersonate) };
    }
    return { authorization: bearer(endpoint.token?.()), headerLines: identityLines(as?.identity) };
  }

  /**
   * Sends one call. Not an async function: every upstream call goes through here (a passthrough's one
   * per request), and a suspended async frame (its registers, the await's closures and reaction) is
   * garbage per call; one `then` carries the answer instead, with the same errors: a credential the
   * endpoint cannot take rejects as it is, a transport failure as the cluster's UpstreamError.
   */
  send(endpoint: ResolvedEndpoint, opts: SendOptions): Promise<Response> {
    let via: Transport;
    let req: UpstreamRequest;
    if (endpoint.notReady !== undefined)
      return Promise.reject(new UpstreamError(endpoint.name, 'unreachable', endpoint.notReady));
    try {
      via = opts.via ?? this.transport;
      req = this.request(endpoint, opts, via);
    } catch (err) {
      return Promise.reject(err);
    }
    const t0 = performance.now();
    let sent: Promise<Response>;
    try {
      sent = via.send(endpoint, req);
    } catch (err) {
      sent = Promise.reject(err);
    }
    return sent.then(
      (res) => this.answered(endpoint, res, t0),
      (err: unknown) => this.failed(endpoint, opts.signal, err, t0),
    );
  }

  /** what goes upstream: the forwardable headers, the credential, the caller's identity, trace context */
  private request(endpoint: ResolvedEndpoint, opts: SendOptions, via: Transport): UpstreamRequest {
    const cred = this.credentials(endpoint);
    // Content-Length stays only for a body relayed as received; a body the fleet built gets its own
    const p = this.forwardableEntries(opts.headers, !(opts.body instanceof ReadableStream));
    if (opts.upgrade) keepUpgrade(p, opts.headers);
    // credential headers never pass: the credential is only added
    if (cred.authorization) insertPair(p, 'authorization', trimValue(cred.authorization));
    // trace context: the request's valid traceparent (checked when the client was bound), else one the
    // fleet set itself (the relay's span per invocation); an invalid one never goes on
    const tp = this.binding?.traceparent;
    if (tp) setPair(p, 'traceparent', tp);
    else if (!parseTraceparent(pairValue(p, 'traceparent'))) {
      dropPair(p, 'traceparent');
      dropPair(p, 'tracestate');
    }
    const req: UpstreamRequest = {
      method: opts.method,
      url: endpoint.server + opts.path,
      // the entries as they are (on Node a list read as a Headers, src/upstreams/pair-headers.ts: an
      // undici Headers per call was a validation and a sorted copy per line, per cluster of a merged
      // list); the Workers runtime's own Headers elsewhere (its fetch copies it)
      headers: entriesHeaders(p),
      headerLines: cred.headerLines,
      body: opts.body ?? null,
      signal:
        via.signalUnheard || (opts.pulled && via.pulledSignalShared) ? opts.signal : callSignal(opts.signal),
      timeoutMs: endpoint.timeoutMs,
    };
    if (opts.pulled) req.pulled = true;
    return req;
  }

  private answered(endpoint: ResolvedEndpoint, res: Response, t0: number): Response {
    this.binding?.onAnswer?.(endpoint.name, res.status);
    // a kept answer took no round trip: it says nothing of the cluster's latency or reachability
    if (this.observer && !servedFromCache(res))
      this.observer.call(
        endpoint.name,
        res.status,
        (performance.now() - t0) / 1000,
        res.status >= 500 ? 'status' : undefined,
        `HTTP ${res.status}`,
      );
    return res;
  }

  private failed(
    endpoint: ResolvedEndpoint,
    signal: AbortSignal | undefined,
    err: unknown,
    t0: number,
  ): never {
    this.binding?.onAnswer?.(endpoint.name, 0);
    const took = (performance.now() - t0) / 1000;
    if (err instanceof HeadersTimeoutError) {
      const e = new UpstreamError(endpoint.name, 'timeout', `${endpoint.timeoutMs / 1000}s`);
      this.observer?.call(endpoint.name, undefined, took, 'timeout', e.message);
      throw e;
    }
    if (signal?.aborted) throw err;
    const e = new UpstreamError(endpoint.name, 'unreachable', describe(err));
    this.observer?.call(endpoint.name, undefined, took, 'unreachable', e.message);
    throw e;
  }
}
