/**
 * What the two dispatch handlers of their own (an upstream watch, ./node-watch.ts; a merged list's
 * pulled body, ./node-list.ts) share: how a call is sent through undici's pool, what its head becomes,
 * and the bookkeeping of one call (its settle, its abort, the request's signal until the body is taken).
 * Each handler keeps what differs: where its chunks go and when the connection is paused.
 */
import { HeadersTimeoutError, type UpstreamRequest } from '../upstreams/transport.ts';
import { hearAbort, unhearAbort } from '../util/abort-hub.ts';

/** What a handler needs of undici's pool (structural: undici itself is node.ts's to import). */
export interface Dispatching {
  dispatch(opts: object, handler: object): boolean;
}

/** a Node Buffer, as far as these files read it (Buffer itself is node.ts's to name) */
export type NodeBuffer = Uint8Array & { toString(encoding: 'latin1'): string };

/** a head's name or value: undici's raw Buffer, or the text itself (./node-watch-h1.ts) */
export type RawHeader = { toString(encoding: 'latin1'): string };

/** What a watch call is sent with (what {@link dispatchGet} passes a pool). */
export interface WatchDispatchOptions {
  origin: string;
  path: string;
  method: string;
  headers: Record<string, string | string[]>;
  headersTimeout?: number;
}

/**
 * What a call tells its handler: undici's legacy dispatch handler, as {@link DispatchAnswer} implements
 * it, and what the fleet's own watch connections (./node-watch-h1.ts, ./node-watch-h2.ts) call alike.
 */
export interface WatchCallHandler {
  onConnect(abort: (err: Error) => void): void;
  onHeaders(status: number, raw: readonly RawHeader[], resume: () => void): boolean;
  onData(chunk: NodeBuffer): boolean;
  onComplete(trailers: readonly RawHeader[]): void;
  onError(err: Error): void;
}

/** An Error with undici's `code` (UND_ERR_…), as the fleet's own watch connections report theirs. */
export function codedError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * How long a connection to `ep` may take, for undici's pool and the fleet's own watch connections alike:
 * a blackholed host must fail within the endpoint's timeout too, and within 30 s whatever it is.
 */
export function connectTimeoutMs(ep: { timeoutMs: number }): number {
  return Math.min(ep.timeoutMs, 30_000);
}

/** answers that have no body, whatever follows their head */
export const NULL_BODY: ReadonlySet<number> = new Set([204, 205, 304]);

/** "scheme://host:port" and "/path?query" of an absolute URL. */
function splitUrl(url: string): { origin: string; path: string } {
  const at = url.indexOf('/', url.indexOf('//') + 2);
  return at < 0 ? { origin: url, path: '/' } : { origin: url.slice(0, at), path: url.slice(at) };
}

/** undici's timeouts before a head as the transport's own error, anything else as the platform maps it */
function neutral(err: unknown, mapError: (err: unknown) => unknown): unknown {
  const code = (err as { code?: string })?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')
    return new HeadersTimeoutError('no response headers in time');
  return mapError(err);
}

/** An answer's header lines (undici's raw name/value buffers) as Headers. */
export function headersFrom(raw: readonly RawHeader[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2)
    headers.append(raw[i]!.toString('latin1'), raw[i + 1]!.toString('latin1'));
  return headers;
}

type Settle = { resolve(r: Response): void; reject(e: unknown): void };

/** One upstream call's bookkeeping, for a handler that extends it. */
export abstract class DispatchAnswer {
  protected abortCall: ((err: Error) => void) | undefined;
  protected resumeCall: (() => void) | undefined;
  /** the promise of the answer's head, until it is settled */
  protected settle: Settle | undefined;
  private signal: AbortSignal | undefined;
  private onAbort: (() => void) | undefined;
  protected over: 'ended' | 'failed' | 'cancelled' | undefined;
  protected failure: unknown;
  protected paused = false;

  constructor(
    settle: Settle,
    signal: AbortSignal | undefined,
    protected readonly mapError: (err: unknown) => unknown,
  ) {
    this.settle = settle;
    if (signal) {
      this.signal = signal;
      this.onAbort = () => void this.cancel(signal.reason);
      // one listener per signal for all its calls (a merged list's n: ../util/abort-hub.ts)
      hearAbort(signal, this.onAbort);
    }
  }

  /** nobody wants the answer any more: end the upstream call */
  abstract cancel(reason?: unknown): unknown;

  /** the request's signal no longer applies (the call is over, or its reader owns it) */
  protected unlisten(): void {
    if (this.onAbort && this.signal) unhearAbort(this.signal, this.onAbort);
    this.signal = undefined;
    this.onAbort = undefined;
  }

  /** hands the answer's head to whoever waits for it (once) */
  protected answer(res: Response): void {
    const s = this.settle;
    this.settle = undefined;
    s?.resolve(res);
  }

  /** the head will not come: whoever waits for it hears `e` (once); false: nobody waited */
  protected refuse(e: unknown): boolean {
    const s = this.settle;
    this.settle = undefined;
    s?.reject(e);
    return !!s;
  }

  /**
   * undici's error as this call's failure, or undefined when it needs no more handling: a call we
   * cancelled (whoever waits for the head hears the cancel's reason; the body's reader was told already),
   * or one that is over
   */
  protected undiciError(err: Error): unknown {
    if (this.over === 'cancelled') {
      this.refuse(this.mapError(this.failure));
      return undefined;
    }
    if (this.over) return undefined;
    return neutral(err, this.mapError);
  }

  /**
   * The call cancelled by its reader or the request's signal (`what`: the message's noun): false when it was
   * over already. Whoever waits for the head hears the reason; the caller then tells the body's reader and
   * ends the upstream request ({@link abortWith}).
   */
  protected markCancelled(reason: unknown, what: string): boolean {
    this.unlisten();
    if (this.over) return false;
    this.over = 'cancelled';
    this.failure = reason ?? new DOMException(`the ${what} was cancelled`, 'AbortError');
    this.refuse(this.mapError(this.failure));
    return true;
  }

  /** ends the upstream request (undici wants an Error) */
  protected abortWith(reason: unknown, what: string): void {
    const err =
      reason instanceof Error ? reason : new DOMException(`the ${what} was cancelled`, 'AbortError');
    this.abortCall?.(err);
  }

  // undici's side
  onConnect(abort: (err: Error) => void): void {
    this.abortCall = abort;
    if (this.over === 'cancelled') abort(this.failure as Error);
  }
}

/** Sends a bodyless GET through `pool` with handler `make(settle)`; resolves once the head is in. */
export function dispatchGet(
  pool: Dispatching,
  req: UpstreamRequest,
  headers: Record<string, string | string[]>,
  mapError: (err: unknown) => unknown,
  make: (settle: Settle) => DispatchAnswer,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    if (req.signal?.aborted) return reject(mapError(req.signal.reason));
    const { origin, path } = splitUrl(req.url);
    const handler = make({ resolve, reject });
    pool.dispatch(
      { origin, path, method: 'GET', headers, headersTimeout: req.timeoutMs, bodyTimeout: 0 },
      handler,
    );
  });
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\0\r\n]/;

/** The request head (`close`: it says `connection: close`); throws on a header line that would not be one line. */
function requestHead(o: WatchDispatchOptions, host: string, close: boolean): string {
  let head = `${o.method} ${o.path} HTTP/1.1\r\n`;
  if (o.headers.host === undefined) head += `host: ${host}\r\n`;
  if (close) head += 'connection: close\r\n';
  for (const [k, v] of Object.entries(o.headers)) {
    if (!TOKEN.test(k) || k === 'connection' || k === 'transfer-encoding' || k === 'keep-alive')
      throw codedError(`invalid header name ${JSON.stringify(k)}`, 'UND_ERR_INVALID_ARG');
    for (const x of Array.isArray(v) ? v : [v]) {
      if (BAD_VALUE.test(x)) throw codedError(`invalid ${k} header`, 'UND_ERR_INVALID_ARG');
      head += `${k}: ${x}\r\n`;
    }
  }
  return `${head}\r\n`;
}

type Target = { tls: boolean; host: string; port: number; authority: string };

/** targets by origin: a merged list sends a call to every cluster's origin per request (a URL parse each) */
const targets = new Map<string, Target>();

/** Where a request goes: TLS or not, the host to connect to (an IPv6 address without brackets), the port. */
function targetOf(origin: string): Target {
  let t = targets.get(origin);
  if (t) return t;
  t = parseTarget(origin);
  // bounded: a fleet's endpoints, not one per request
  if (targets.size >= 16_384) targets.clear();
  targets.set(origin, t);
  return t;
}

function parseTarget(origin: string): Target {
  const url = new URL(origin);
  const tls = url.protocol === 'https:';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { tls, host, port: Number(url.port) || (tls ? 443 : 80), authority: url.host };
}

/**
 * A call as the fleet's own HTTP/1.1 connections send it (./node-watch-h1.ts, ./node-list-h1.ts): where
 * it goes and its head (`close`: the head says `connection: close`); undefined when it cannot be sent,
 * the handler told why.
 */
export function h1Request(
  o: WatchDispatchOptions,
  h: WatchCallHandler,
  close: boolean,
): { to: Target; head: string } | undefined {
  try {
    const to = targetOf(o.origin);
    return { to, head: requestHead(o, to.authority, close) };
  } catch (err) {
    h.onError(err as Error);
    return undefined;
  }
}

/** what a call fails with when its transport closes under it or before it (undici's closed pool's error) */
export function transportClosed(): Error {
  return codedError('the transport was closed', 'UND_ERR_DESTROYED');
}

/** fails every call of `open` with {@link transportClosed} and forgets them (their transport closes) */
export function failOpen(open: Set<{ fail(err: Error): void }>): void {
  for (const c of open) c.fail(transportClosed());
  open.clear();
}
