/**
 * Shared reads: a Transport in front of the platform's that coalesces identical concurrent reads and
 * keeps what Kubernetes lets one keep (./policy.ts decides which), in memory per process or isolate and,
 * where the runtime has one, in its shared cache (Workers: the location's Cache API).
 *
 * Sitting below the upstream client, it sees each request exactly as it goes to one cluster: the kube
 * path and query, the Accept the route negotiated, and the identity on the wire (Authorization and every
 * Impersonate-* line). All of them are in the key, so two callers the cluster could answer differently
 * never share an answer: not through the cache, not by joining each other's call.
 */
import { impersonationHeaders } from '../../auth/identity.ts';
import type { CacheConfig } from '../../config/schema.ts';
import { concatBytes } from '../../util/bytes.ts';
import { callSignal } from '../call-signal.ts';
import { Coalescer, type Head } from '../coalesce.ts';
import type { ResolvedEndpoint } from '../endpoint.ts';
import type { Transport, UpstreamRequest } from '../transport.ts';
import { KEYED_HEADERS, normalizedPath, type ReadKind, readKind, storable } from './policy.ts';
import { type EdgeStore, MemoryStore, type StoredAnswer } from './store.ts';

export type ReadResult = 'hit' | 'miss' | 'coalesced';

/** Told how each shareable read was answered, and of readers detached for being slow (metrics). */
export interface ReadsObserver {
  read(cluster: string, result: ReadResult): void;
  detached(): void;
}

export interface SharedReadsOptions {
  /** the runtime's shared cache (Workers: caches.default) */
  edge?: EdgeStore;
  observer?: ReadsObserver;
  now?: () => number;
  /** Workers: a shared call is the starting request's I/O and goes with it (see CoalesceOptions) */
  ownerBound?: boolean;
  /** with ownerBound: how long readers wait for the next bytes of a shared call before giving it up */
  stallMs?: number;
}

/** Readers of an owner-bound call give it up after this long without new bytes (the list body-idle default). */
export const DEFAULT_STALL_MS = 10_000;

/** The default slow-reader bound: a reader this far behind the fastest one is detached. */
export const DEFAULT_LAG_BYTES = 4 * 1024 * 1024;

export class SharedReads implements Transport {
  readonly memory: MemoryStore;
  readonly coalescer: Coalescer;
  private readonly now: () => number;
  private seq = 0;

  constructor(
    private readonly inner: Transport,
    readonly config: CacheConfig,
    private readonly opts: SharedReadsOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.memory = new MemoryStore(config.ttlSeconds * 1000, config.maxBytes, this.now);
    const lagBytes = config.lagBytes ?? DEFAULT_LAG_BYTES;
    this.coalescer = new Coalescer({
      lagBytes,
      keepBytes: this.caching ? this.memory.entryLimit : lagBytes,
      budgetBytes: config.maxBytes,
      onDetached: () => opts.observer?.detached(),
      ownerBound: opts.ownerBound,
      stallMs: opts.ownerBound ? (opts.stallMs ?? DEFAULT_STALL_MS) : undefined,
    });
  }

  /**
   * a pulled call passed straight through hears the caller's signal as the inner transport does (one
   * listener per signal): without this the client derived a signal (AbortSignal.any) per 8 clusters of
   * every merged list; one this class shares gets the derived one still (see send)
   */
  get pulledSignalShared(): boolean | undefined {
    return this.inner.pulledSignalShared;
  }

  get caching(): boolean {
    return this.config.ttlSeconds > 0;
  }

  close(): Promise<void> {
    return this.inner.close?.() ?? Promise.resolve();
  }

  /** not an async function: a call that is not shared (every cluster of most merged lists) costs no frame */
  send(endpoint: ResolvedEndpoint, req: UpstreamRequest): Promise<Response> {
    try {
      const kind =
        req.body === null && req.url.startsWith(endpoint.server)
          ? readKind(req.method, req.url.slice(endpoint.server.length))
          : undefined;
      if (!kind || (!this.caching && !this.config.coalesce)) return this.inner.send(endpoint, req);
      return this.sendShared(endpoint, req, kind);
    } catch (err) {
      // as an async function's: a failure is a rejection, never a throw
      return Promise.reject(err);
    }
  }

  private async sendShared(
    endpoint: ResolvedEndpoint,
    req: UpstreamRequest,
    kind: ReadKind,
  ): Promise<Response> {
    // the coalescer listens on the caller's signal once per call: derived as the client would have
    const caller = req.pulled && this.inner.pulledSignalShared ? callSignal(req.signal) : req.signal;
    const asked = this.withPublicIdentity(kind, req);
    const key = await answerKey(endpoint, kind, asked);
    const cluster = endpoint.name;
    if (this.caching) {
      const hit = await this.lookup(key);
      if (hit) {
        this.opts.observer?.read(cluster, 'hit');
        const res = answerResponse(hit, this.now());
        fromCache.add(res);
        return res;
      }
    }
    const onComplete = this.caching
      ? (head: Head, body: Uint8Array[]) => this.store(key, head, body)
      : undefined;
    // without coalescing every call is its own (a key nobody else has), kept for the cache all the same
    const joinKey = this.config.coalesce ? key : `${key}#${this.seq++}`;
    const { res, joined } = await this.coalescer.join(
      joinKey,
      (signal) => this.inner.send(endpoint, { ...asked, signal }),
      caller,
      onComplete,
    );
    this.opts.observer?.read(cluster, joined ? 'coalesced' : 'miss');
    return res;
  }

  /**
   * Discovery and OpenAPI asked as the configured public identity instead of the caller, so that one
   * answer serves everyone. Only where the fleet impersonates (its own credential, Impersonate-* lines):
   * with the caller's own credential (passthrough) there is nobody else to ask as.
   */
  private withPublicIdentity(kind: ReadKind, req: UpstreamRequest): UpstreamRequest {
    const pub = this.config.publicIdentity;
    if (!pub || kind === 'any-version') return req;
    if (!req.headerLines?.some(([k]) => k.toLowerCase() === 'impersonate-user')) return req;
    return { ...req, headerLines: impersonationHeaders({ user: pub.user, groups: pub.groups ?? [] }) };
  }

  private async lookup(key: string): Promise<StoredAnswer | undefined> {
    const mem = this.memory.get(key);
    if (mem) return mem;
    const edge = await this.opts.edge?.get(key).catch(() => undefined);
    if (!edge) return undefined;
    if (this.now() - edge.storedAt >= this.config.ttlSeconds * 1000) return undefined;
    this.memory.set(key, edge);
    return edge;
  }

  private async store(key: string, head: Head, body: Uint8Array[]): Promise<void> {
    if (!storable(head.status)) return;
    const answer: StoredAnswer = {
      status: head.status,
      headers: head.headers,
      body: concatBytes(body),
      storedAt: this.now(),
    };
    this.memory.set(key, answer);
    await this.opts.edge?.put(key, answer, this.config.ttlSeconds);
  }
}

/**
 * `inner` behind shared reads, once: a transport already behind them (an embedder or test that wrapped
 * its platform's) is kept as it is, so no read is keyed and counted twice.
 */
export function sharedReadsOver(
  inner: Transport,
  config: CacheConfig,
  opts: SharedReadsOptions = {},
): Transport {
  return inner instanceof SharedReads ? inner : new SharedReads(inner, config, opts);
}

const fromCache = new WeakSet<Response>();

/**
 * Whether `res` is a kept answer rather than one the cluster just sent: upstream latency and reachability
 * figures must leave these out (they took no round trip).
 */
export function servedFromCache(res: Response): boolean {
  return fromCache.has(res);
}

/** A kept answer as a fresh Response, with its `Age` (RFC 9111 §5.1). */
export function answerResponse(a: StoredAnswer, now: number): Response {
  const headers = new Headers(a.headers);
  headers.set('Age', String(Math.max(0, Math.floor((now - a.storedAt) / 1000))));
  return new Response(a.body.slice(), { status: a.status, headers });
}

/**
 * The key of one read: the cluster (name and server), the kind, the normalized path and query, the
 * headers that change the answer, and the identity on the wire. Hashed (SHA-256): keys hold credentials
 * and may end up in a cache URL.
 */
export async function answerKey(
  endpoint: ResolvedEndpoint,
  kind: ReadKind,
  req: UpstreamRequest,
): Promise<string> {
  const path = normalizedPath(req.url.slice(endpoint.server.length));
  const material = JSON.stringify([
    endpoint.name,
    endpoint.server,
    kind,
    path,
    KEYED_HEADERS.map((h) => req.headers.get(h) ?? ''),
    req.headers.get('authorization') ?? '',
    (req.headerLines ?? []).map(([k, v]) => [k.toLowerCase(), v]),
  ]);
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(material));
  let hex = '';
  for (const b of new Uint8Array(digest)) hex += b.toString(16).padStart(2, '0');
  return hex;
}
