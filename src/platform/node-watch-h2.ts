/**
 * Upstream watches over HTTP/2 as streams of node:http2 sessions this file shares per origin, instead of
 * undici's pool: undici keeps a Request per stream and nine listeners on it (their closures and `once`
 * wrappers), ≈ 2 KiB per idle upstream watch; here a stream keeps three listeners and one small object
 * (issue 16, goal 5). Everything else goes on through undici's pool, which speaks h2 as well.
 *
 * It is a `Dispatching` as ./node-dispatch.ts reads one: the handler (./node-watch.ts's WatchAnswer) hears
 * what undici's pool would tell it (onConnect, onHeaders, onData, onComplete, onError), the timeouts before
 * a head with undici's error codes. node.ts opens the sessions (node:http2 and node:tls are its to import):
 * h2c with prior knowledge, or TLS whose ALPN picked h2; a TLS endpoint that picks HTTP/1.1 is handed to
 * `fallback` (undici's pool) from then on.
 *
 * Sessions: a stream goes on the first open session with room (the peer's SETTINGS_MAX_CONCURRENT_STREAMS,
 * at most `maxStreams`), else on a new one; streams wait for a new session's first SETTINGS before they are
 * sent, so a burst of opens shares it as far as its room goes. A session that goes
 * away (GOAWAY, error, close) takes no more streams; one left without streams closes after 30 s.
 */
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import {
  codedError,
  connectTimeoutMs,
  type Dispatching,
  type NodeBuffer,
  type RawHeader,
  type WatchCallHandler,
  type WatchDispatchOptions,
} from './node-dispatch.ts';

/** a session's room when the peer's SETTINGS set no limit to its streams (RFC 9113 §6.5.2 recommends ≥ 100) */
const UNTIL_SETTINGS = 100;
/** a session without streams closes after this long */
const IDLE_MS = 30_000;
/** RST_STREAM's CANCEL */
const CANCEL = 8;
/** headers HTTP/2 has no place for (RFC 9113 §8.2.2), and `host` (it is `:authority`) */
const NOT_H2 = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** A stream as this file uses it (node:http2's ClientHttp2Stream). */
export interface H2Stream {
  once(event: 'response', fn: (headers: Record<string, unknown>) => void): unknown;
  on(event: 'data', fn: (b: NodeBuffer) => void): unknown;
  on(event: 'close', fn: () => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  readonly rstCode?: number;
  /** the body's end was read (node:stream's Readable) */
  readonly readableEnded?: boolean;
  /** node:http2's own copy of the request's headers, kept by the stream for its whole life */
  readonly sentHeaders?: Record<string, unknown>;
  pause(): unknown;
  resume(): unknown;
  close(code?: number): unknown;
}

/** A session as this file uses it (node:http2's ClientHttp2Session). */
export interface H2Session {
  request(headers: Record<string, string | string[]>, options: { endStream: boolean }): H2Stream;
  on(event: 'remoteSettings', fn: (s: { maxConcurrentStreams?: number }) => void): unknown;
  on(event: 'goaway' | 'close', fn: () => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  close(): unknown;
}

/**
 * Opens a session to `origin` (node.ts): `ready` with it, or with undefined when TLS's ALPN did not pick
 * h2; `failed` when the connection could not be made.
 */
export type SessionConnector = (
  origin: URL,
  ep: ResolvedEndpoint,
  ready: (s: H2Session | undefined) => void,
  failed: (err: Error) => void,
) => void;

/** One session of an origin, and what it carries. */
class Pooled {
  session: H2Session | undefined;
  /**
   * dispatches waiting for the session's room to be known (its peer's first SETTINGS): a burst of opens
   * waits on one connecting session instead of opening one per {@link UNTIL_SETTINGS}
   */
  waiting: Array<[WatchDispatchOptions, WatchCallHandler]> | undefined = [];
  streams = 0;
  room: number;
  gone = false;
  /** the session's first SETTINGS must come within the connect timeout */
  connecting: ReturnType<typeof setTimeout> | undefined;
  private idle: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly list: Pooled[],
    private readonly maxStreams: number,
    /** sends what waited, once the room is known (or fails it: `err`) */
    private readonly flush: (p: Pooled, err: Error | undefined) => void,
  ) {
    // while connecting, any number may wait on it; what its room does not take goes elsewhere then
    this.room = maxStreams;
  }

  take(s: H2Session): void {
    this.session = s;
    s.on('remoteSettings', (set) => {
      this.room = Math.min(this.maxStreams, set.maxConcurrentStreams ?? UNTIL_SETTINGS);
      if (this.waiting) this.flush(this, undefined);
    });
    // what still waits for the SETTINGS fails with the session (sent elsewhere, a refused connection
    // would be opened again at once, without end); its streams hear the error themselves
    const leave = (err?: Error) => {
      if (this.waiting)
        this.flush(this, err ?? codedError('the session closed before its SETTINGS', 'UND_ERR_SOCKET'));
      this.leave();
    };
    s.on('goaway', () => leave());
    s.on('close', () => leave());
    // unheard, the session's error would crash the process
    s.on('error', leave);
  }

  /** takes no more streams (what still waits goes elsewhere) */
  leave(): void {
    if (this.gone) return;
    this.gone = true;
    const at = this.list.indexOf(this);
    if (at >= 0) this.list.splice(at, 1);
    if (this.idle !== undefined) clearTimeout(this.idle);
    if (this.waiting) this.flush(this, undefined);
  }

  started(): void {
    this.streams++;
    if (this.idle !== undefined) clearTimeout(this.idle);
    this.idle = undefined;
  }

  finished(): void {
    if (--this.streams > 0 || this.gone) return;
    this.idle = setTimeout(() => {
      if (this.streams > 0) return;
      this.leave();
      this.session?.close();
    }, IDLE_MS);
    (this.idle as { unref?: () => void }).unref?.();
  }
}

/** One endpoint's upstream watches over HTTP/2. */
export class H2Watches implements Dispatching {
  private readonly pools = new Map<string, Pooled[]>();
  /** the endpoint's TLS picked HTTP/1.1: its watches go to the fallback */
  private h1 = false;

  constructor(
    private readonly ep: ResolvedEndpoint,
    private readonly connect: SessionConnector,
    private readonly fallback: Dispatching,
    private readonly maxStreams = 1000,
  ) {}

  dispatch(opts: object, handler: object): boolean {
    if (this.h1) return this.fallback.dispatch(opts, handler);
    const o = opts as WatchDispatchOptions;
    let list = this.pools.get(o.origin);
    if (!list) {
      list = [];
      this.pools.set(o.origin, list);
    }
    let p = list.find((x) => !x.gone && x.streams + (x.waiting?.length ?? 0) < x.room);
    if (!p) p = this.open(o.origin, list);
    if (p.waiting) p.waiting.push([o, handler as WatchCallHandler]);
    else this.send(p, o, handler as WatchCallHandler);
    return true;
  }

  private open(origin: string, list: Pooled[]): Pooled {
    const p = new Pooled(list, this.maxStreams, (q, err) => this.flush(q, err));
    list.push(p);
    // a host that takes the connection and never speaks h2 fails what waits, as the pool's connect timeout
    p.connecting = setTimeout(() => {
      this.flush(p, codedError('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT'));
      p.leave();
      p.session?.close();
    }, connectTimeoutMs(this.ep));
    try {
      this.connect(
        new URL(origin),
        this.ep,
        (s) => {
          if (s) p.take(s);
          else {
            this.h1 = true;
            p.leave();
          }
        },
        (err) => {
          this.flush(p, err);
          p.leave();
        },
      );
    } catch (err) {
      this.flush(p, err as Error);
      p.leave();
    }
    return p;
  }

  /** sends what waited on `p` as far as its room goes; the rest is dispatched anew (`err`: fails it all) */
  private flush(p: Pooled, err: Error | undefined): void {
    const waiting = p.waiting ?? [];
    p.waiting = undefined;
    if (p.connecting !== undefined) clearTimeout(p.connecting);
    p.connecting = undefined;
    for (const [o, h] of waiting)
      if (err) h.onError(err);
      else if (!p.gone && p.session && p.streams < p.room) this.send(p, o, h);
      else this.dispatch(o, h);
  }

  private send(p: Pooled, o: WatchDispatchOptions, h: WatchCallHandler): void {
    const headers: Record<string, string | string[]> = {
      ':method': o.method,
      ':path': o.path,
      ':authority': (o.headers.host as string | undefined) ?? new URL(o.origin).host,
    };
    for (const [k, v] of Object.entries(o.headers)) if (!NOT_H2.has(k)) headers[k] = v;
    let stream: H2Stream;
    try {
      stream = p.session!.request(headers, { endStream: true });
    } catch (err) {
      h.onError(err as Error);
      return;
    }
    forgetSent(stream);
    p.started();
    new H2Call(stream, h, p, o.headersTimeout ?? 0).start();
  }

  /** ends every session (the transport closes): their streams end with them */
  close(): void {
    for (const list of this.pools.values())
      for (const p of [...list]) {
        p.leave();
        p.session?.close();
      }
    this.pools.clear();
  }
}

/** the symbol node:http2 keeps a stream's sent headers under (lib/internal/http2/core.js kSentHeaders) */
let sentKey: symbol | undefined;

/**
 * Lets go of node:http2's copy of what the request sent (`sentHeaders`, which nothing but that getter
 * reads once the frame is built): a null-prototype object (a dictionary of ≈ 0.45 KiB) of every forwarded
 * header, with the path and the credentials, that each upstream watch would otherwise keep for its life.
 * Where the copy is not found under that symbol, it is emptied instead (its keys and values let go).
 */
function forgetSent(stream: H2Stream): void {
  const sent = stream.sentHeaders;
  if (!sent) return;
  sentKey ??= Object.getOwnPropertySymbols(stream).find((s) => s.description === 'sent-headers');
  const holder = stream as unknown as Record<symbol, unknown>;
  if (sentKey && holder[sentKey] === sent) holder[sentKey] = undefined;
  else for (const k of Object.keys(sent)) delete sent[k];
}

/** One watch on its stream, told to the handler. */
class H2Call {
  private over = false;
  private answered = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly stream: H2Stream,
    private readonly h: WatchCallHandler,
    private readonly p: Pooled,
    private readonly headersMs: number,
  ) {}

  start(): void {
    const s = this.stream;
    // heard once: an idle watch keeps three listeners (data, error, close), not five
    s.once('response', (headers) => this.response(headers));
    s.on('data', (b) => {
      if (!this.over && !this.h.onData(b) && !this.over) s.pause();
    });
    s.on('error', (err) => this.fail(err));
    // the close follows the end of the body (or an error, heard first): a stream that ended after its
    // head completes; one its session's close reset (code ≠ 0), or that ended before any head, is a cut
    s.on('close', () =>
      !s.rstCode && this.answered && s.readableEnded
        ? this.complete()
        : this.fail(codedError(`the stream was reset (code ${s.rstCode ?? 0})`, 'UND_ERR_SOCKET')),
    );
    if (this.headersMs > 0)
      this.timer = setTimeout(
        () => this.abort(codedError('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT')),
        this.headersMs,
      );
    this.h.onConnect((err) => this.abort(err));
  }

  private response(headers: Record<string, unknown>): void {
    if (this.over) return;
    this.answered = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const raw: RawHeader[] = [];
    for (const [k, v] of Object.entries(headers)) {
      if (k.startsWith(':') || v === undefined) continue;
      for (const x of Array.isArray(v) ? v : [v]) raw.push(k, String(x));
    }
    this.h.onHeaders(Number(headers[':status']), raw, () => {
      if (!this.over) this.stream.resume();
    });
  }

  private finish(): boolean {
    if (this.over) return false;
    this.over = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.p.finished();
    return true;
  }

  private complete(): void {
    if (this.finish()) this.h.onComplete([]);
  }

  private fail(err: Error): void {
    if (this.finish()) this.h.onError(err);
  }

  private abort(err: Error): void {
    if (!this.finish()) return;
    this.stream.close(CANCEL);
    this.h.onError(err);
  }
}
