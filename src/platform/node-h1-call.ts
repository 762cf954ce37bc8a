/**
 * The fleet's own HTTP/1.1 response reader, on a connection node.ts opens: one call's answer read as it
 * comes (framing: chunked, Content-Length, or the body up to the close; 1xx heads skipped) and told to an
 * undici-style dispatch handler (onConnect, onHeaders, onData, onComplete, onError, with undici's error
 * codes), so a handler reads its answer the same whichever pool it came through. Upstream watches
 * (./node-watch-h1.ts: a connection each, closed after) and a merged list's pulled bodies
 * (./node-list-h1.ts: kept-alive connections per endpoint) are read by it; node-watch-h1.test.ts and
 * node-list-h1.test.ts test it.
 */
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { codedError, type NodeBuffer, type RawHeader, type WatchCallHandler } from './node-dispatch.ts';

/** a response head larger than this is refused (undici's and Node's default is 16 KiB) */
const MAX_HEAD_BYTES = 64 * 1024;
/** a chunk-size or trailer line longer than this is refused */
const MAX_LINE_BYTES = 4096;

/** a socket's read, as far as this file reads it (a Node Buffer: latin1 text is its bytes one to one) */
type Bytes = NodeBuffer & {
  subarray(start?: number, end?: number): Bytes;
  indexOf(value: number | string, from?: number): number;
  toString(encoding: 'latin1', start?: number, end?: number): string;
};

/** A connection as these files use it (node:net's or node:tls's socket: node.ts makes it). */
export interface WatchSocket {
  on(event: 'data', fn: (b: Bytes) => void): unknown;
  on(event: 'end' | 'close', fn: () => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  off(event: 'data', fn: (b: Bytes) => void): unknown;
  off(event: 'end' | 'close', fn: () => void): unknown;
  off(event: 'error', fn: (err: Error) => void): unknown;
  once(event: 'connect' | 'secureConnect', fn: () => void): unknown;
  write(text: string, encoding: 'latin1'): unknown;
  pause(): unknown;
  resume(): unknown;
  ref(): unknown;
  unref(): unknown;
  destroy(): unknown;
}

/** Where to connect, with the endpoint's TLS settings when `tls`. */
export interface WatchConnect {
  tls: boolean;
  host: string;
  port: number;
  ep: ResolvedEndpoint;
}

/**
 * Opens a watch's connection (node.ts: net.connect or tls.connect, no delay, TCP keep-alive), each read
 * handed to `reader` (the H1Call), its bytes valid during that call only (node.ts reads plain TCP into one
 * shared buffer).
 */
export type WatchConnector = (to: WatchConnect, reader: { feed(b: Bytes): void }) => WatchSocket;

/** Opens a list's connection (as WatchConnector), read as its 'data' events: a buffer each, the merge holds them */
export type ListConnector = (to: WatchConnect) => WatchSocket;

/** a `Keep-Alive: timeout=N` answer's idle time for a kept connection (a second less, as undici's pool), at most `max` */
function keepAliveMs(value: string, max: number): number {
  const m = /(?:^|[,;\s])timeout\s*=\s*(\d+)/i.exec(value);
  return m ? Math.min(max, Number(m[1]) * 1000 - 1000) : max;
}

type State = 'head' | 'size' | 'data' | 'crlf' | 'trailers' | 'length' | 'close';

/** What a call does with its connection once its answer is read whole (./node-list-h1.ts keeps it). */
export interface H1CallOptions {
  tls: boolean;
  connectMs: number;
  /** the connection is open already (kept from an earlier call): no connect to wait for */
  reused?: boolean;
  headersMs: number;
  /**
   * the call's connection may be kept (its request did not say `connection: close`): handed over with
   * the call, whose listeners stay on it (a list's: {@link H1Call.park}, {@link H1Call.again})
   */
  keep?: (call: H1Call, idleMs: number) => void;
  /** the connection failed before any byte of an answer: true when the caller sends the request again */
  retry?: (err: Error) => boolean;
}

/** a kept connection's idle time when the answer does not say (undici's pool: 30 s) */
const IDLE_MS = 30_000;

/**
 * One call on its socket: the response read as it comes, told to the handler. Its listeners are its own;
 * a list's stay on its connection when it is kept, and the next call on it is read by the same H1Call
 * ({@link H1Call.again}).
 */
export class H1Call {
  over = false;
  private state: State = 'head';
  /** the head (or a chunk-size / trailer line) read so far, as latin1 text, when it spans reads */
  private partial: string | undefined;
  /** bytes left of the current chunk (or of a Content-Length body); CRLF bytes left after a chunk */
  private left = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** what a read held back when the handler asked to pause: read first on resume */
  private rest: Bytes | undefined;
  /**
   * reads that came while paused, after `rest`: a TLS socket reading into a buffer (onread) hands over
   * the rest of what it decrypted from one TCP read even after pause() (docs/watch-burst.md)
   */
  private later: Bytes[] | undefined;
  private paused = false;
  /** the connection ended while a pause held bytes back */
  private eof = false;
  /** a byte of the answer came */
  private heard = false;
  /** the answer lets its connection be kept for another call (-1: it does not), and for how long */
  private idleMs = -1;
  readonly socket: WatchSocket;
  /**
   * while its connection waits kept between calls: what any event of it does instead (ends it). A list's
   * listeners stay on its connection from call to call: taken off and put back (and a kept connection's
   * own four) were 16 listener changes per cluster of every merged list.
   */
  private parked: (() => void) | undefined;
  /** reads the socket's 'data' events (a list's); undefined: the connector hands the reads to `feed` */
  private readonly onData: ((b: Bytes) => void) | undefined;
  private readonly onEnd = () => (this.parked ? this.parked() : this.ended());
  private readonly onError = (err: Error) => (this.parked ? this.parked() : this.fail(err));
  private readonly onClose = () => {
    if (this.parked) this.parked();
    else if (this.holding) this.eof = true;
    else this.fail(codedError('other side closed', 'UND_ERR_SOCKET'));
  };
  private h: WatchCallHandler;
  private done: (call: H1Call) => void;
  private o: H1CallOptions;

  /**
   * `from`: the connection to read, as its 'data' events (a list's, kept or opened for it); or what opens
   * one with the call as its reader (a watch's, WatchConnector: the call keeps nothing of a read past it)
   */
  constructor(
    from: WatchSocket | ((reader: H1Call) => WatchSocket),
    h: WatchCallHandler,
    done: (call: H1Call) => void,
    o: H1CallOptions,
  ) {
    this.h = h;
    this.done = done;
    this.o = o;
    const opens = typeof from === 'function';
    const socket = opens ? from(this) : from;
    this.socket = socket;
    this.onData = opens ? undefined : (b) => (this.parked ? this.parked() : this.feed(b));
    if (this.onData) socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    if (o.reused) {
      this.connected(o.headersMs);
      return;
    }
    if (o.connectMs > 0)
      this.timer = setTimeout(
        () => this.fail(codedError('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT')),
        o.connectMs,
      );
    socket.once(o.tls ? 'secureConnect' : 'connect', () => this.connected(o.headersMs));
  }

  private connected(headersMs: number): void {
    if (this.over || this.state !== 'head') return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer =
      headersMs > 0
        ? setTimeout(
            () => this.fail(codedError('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT')),
            headersMs,
          )
        : undefined;
  }

  /**
   * Its kept connection waits for the next call: `drop` is what any event on it does meanwhile (a close,
   * an unexpected byte). Only for a call that read its connection's 'data' events (a list's).
   */
  park(drop: () => void): void {
    this.parked = drop;
  }

  /**
   * The next call on this kept connection (parked): this reader, reset, reads its answer; its listeners
   * are the ones already on the connection.
   */
  again(h: WatchCallHandler, done: (call: H1Call) => void, o: H1CallOptions): this {
    this.parked = undefined;
    this.h = h;
    this.done = done;
    this.o = o;
    this.over = false;
    this.state = 'head';
    this.partial = undefined;
    this.left = 0;
    this.timer = undefined;
    this.rest = undefined;
    this.later = undefined;
    this.paused = false;
    this.eof = false;
    this.heard = false;
    this.idleMs = -1;
    this.connected(o.headersMs);
    return this;
  }

  /** the call is over: its connection kept for another (`keep`: nothing of it is left unread) or closed */
  private finish(keep = false): void {
    this.over = true;
    this.done(this);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.partial = undefined;
    this.rest = undefined;
    this.later = undefined;
    const s = this.socket;
    // kept with its listeners on (only a call reading 'data' events: a watch's reads go to `feed` alone)
    if (keep && this.idleMs > 0 && !this.eof && this.o.keep && this.onData) this.o.keep(this, this.idleMs);
    else s.destroy();
  }

  /** ends the call with `err` (an abort, the transport closing, a failure read) */
  fail(err: Error): void {
    if (this.over) return;
    this.finish();
    // a kept connection the server closed as the request went out: the caller may send it again
    if (!this.heard && this.o.reused && this.o.retry?.(err)) return;
    this.h.onError(err);
  }

  /** the answer is read whole; `keep`: the read it ended in held nothing after it */
  private complete(keep = false): void {
    if (this.over) return;
    this.finish(keep);
    this.h.onComplete([]);
  }

  private ended(): void {
    // what a pause held back is read first (on resume): the end comes after it
    if (this.holding) {
      this.eof = true;
      return;
    }
    if (this.state === 'close') this.complete();
    else this.fail(codedError('other side closed', 'UND_ERR_SOCKET'));
  }

  private resume(): void {
    if (!this.paused || this.over) return;
    this.paused = false;
    const r = this.rest;
    this.rest = undefined;
    if (r) this.feed(r);
    while (!this.paused && !this.over && this.later?.length) this.feed(this.later.shift()!);
    if (this.paused || this.over) return;
    this.later = undefined;
    if (this.eof) this.ended();
    else this.socket.resume();
  }

  /** hands body bytes on; false: the handler asked to pause (the rest of `b` from `next` is kept) */
  private deliver(bytes: Bytes, b: Bytes, next: number): boolean {
    if (this.h.onData(bytes) || this.over) return !this.over;
    this.paused = true;
    // a read handed to `feed` is the next read's buffer too (WatchConnector): what is kept of it, a copy
    if (next < b.length)
      this.rest = this.onData ? b.subarray(next) : (Uint8Array.prototype.slice.call(b, next) as Bytes);
    this.socket.pause();
    return false;
  }

  private get holding(): boolean {
    return this.rest !== undefined || !!this.later?.length;
  }

  /** reads `b` (the connection's read, or what a pause held back) as far as it goes */
  feed(b: Bytes): void {
    this.heard = true;
    if (this.paused) {
      // kept, never dropped: a read handed to `feed` is the next read's buffer too (a copy)
      if (this.over) return;
      this.later ??= [];
      this.later.push(this.onData ? b : (Uint8Array.prototype.slice.call(b) as Bytes));
      return;
    }
    let i = 0;
    while (i < b.length && !this.over && !this.paused) {
      switch (this.state) {
        case 'head':
          i = this.readHead(b, i);
          break;
        case 'size':
        case 'trailers': {
          const next = this.state === 'size' && this.partial === undefined ? this.sizeLine(b, i) : 0;
          if (next > 0) {
            i = next;
            break;
          }
          const line = this.line(b, i);
          if (!line) return;
          i = line.next;
          if (this.state === 'size') this.chunkSize(line.text);
          else if (line.text === '') this.complete(i === b.length);
          break;
        }
        case 'data':
        case 'length': {
          const n = Math.min(this.left, b.length - i);
          const bytes = b.subarray(i, i + n);
          i += n;
          this.left -= n;
          if (this.left === 0) {
            if (this.state === 'length') {
              this.h.onData(bytes);
              this.complete(i === b.length);
              return;
            }
            this.state = 'crlf';
            this.left = 2;
          }
          if (!this.deliver(bytes, b, i)) return;
          break;
        }
        case 'crlf':
          if (b[i] !== (this.left === 2 ? 13 : 10)) {
            this.fail(codedError('invalid chunked body', 'HPE_INVALID_CHUNK_SIZE'));
            return;
          }
          i++;
          if (--this.left === 0) this.state = 'size';
          break;
        case 'close':
          if (!this.deliver(b.subarray(i), b, b.length)) return;
          i = b.length;
          break;
      }
    }
  }

  /** one CRLF-ended line from `b` at `i` (joined with what came before), or undefined: it goes on */
  private line(b: Bytes, i: number): { text: string; next: number } | undefined {
    const at = b.indexOf(10, i);
    const all = (this.partial ?? '') + b.toString('latin1', i, at < 0 ? b.length : at);
    if (at < 0) {
      if (all.length > MAX_LINE_BYTES) this.fail(codedError('line too long', 'HPE_HEADER_OVERFLOW'));
      else this.partial = all;
      return undefined;
    }
    this.partial = undefined;
    return { text: all.endsWith('\r') ? all.slice(0, -1) : all, next: at + 1 };
  }

  // a chunk-size line of 1 to 12 hex digits and CRLF whole at b[i], read without a string (kube writes
  // each event as a chunk): where its data begins; 0 for any other line (split, extensions: chunkSize)
  private sizeLine(b: Bytes, i: number): number {
    let size = 0;
    let k = i;
    for (; k < b.length && k - i <= 12; k++) {
      const c = b[k]!;
      const l = c | 0x20;
      const v = c >= 0x30 && c <= 0x39 ? c - 0x30 : l >= 0x61 && l <= 0x66 ? l - 0x57 : -1;
      if (v < 0) break;
      size = size * 16 + v;
    }
    if (k === i || k - i > 12 || k + 1 >= b.length || b[k] !== 13 || b[k + 1] !== 10) return 0;
    this.state = size === 0 ? 'trailers' : 'data';
    this.left = size;
    return k + 2;
  }

  private chunkSize(text: string): void {
    const hex = text.split(';', 1)[0]!.trim();
    const size = /^[0-9a-fA-F]{1,12}$/.test(hex) ? Number.parseInt(hex, 16) : Number.NaN;
    if (Number.isNaN(size)) this.fail(codedError('invalid chunk size', 'HPE_INVALID_CHUNK_SIZE'));
    else {
      this.state = size === 0 ? 'trailers' : 'data';
      this.left = size;
    }
  }

  /** reads the head from `b` at `i`; returns where the body starts in `b` (or b.length: more to come) */
  private readHead(b: Bytes, i: number): number {
    const before = this.partial?.length ?? 0;
    // as text up to the first blank line in `b` (a list's first read is mostly its body)
    const at = b.indexOf('\r\n\r\n', i);
    const all = (this.partial ?? '') + b.toString('latin1', i, at < 0 ? b.length : at + 4);
    // the head's end may straddle reads: search from just before the new bytes
    const end = all.indexOf('\r\n\r\n', Math.max(0, before - 3));
    if (end < 0) {
      if (all.length > MAX_HEAD_BYTES) this.fail(codedError('headers too large', 'UND_ERR_HEADERS_OVERFLOW'));
      else this.partial = all;
      return b.length;
    }
    this.partial = undefined;
    // a head that arrived whole in one read is held to the same limit as one that straddles reads
    if (end > MAX_HEAD_BYTES) {
      this.fail(codedError('headers too large', 'UND_ERR_HEADERS_OVERFLOW'));
      return b.length;
    }
    this.head(all.slice(0, end));
    // latin1: one character a byte
    return i + (end + 4 - before);
  }

  /** a whole head (without its blank line): the answer's status and headers, and how its body is framed */
  private head(text: string): void {
    const lines = text.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? '');
    if (!m) {
      this.fail(codedError('invalid HTTP response', 'HPE_INVALID_CONSTANT'));
      return;
    }
    const status = Number(m[1]);
    // informational answers say nothing of the call: the next head is the answer
    if (status >= 100 && status < 200 && status !== 101) return;
    const raw: RawHeader[] = [];
    let chunked = false;
    let length: number | undefined;
    // HTTP/1.1 keeps its connection unless it says `close`; a kept one idles as long as the answer says
    let idleMs = lines[0]!.startsWith('HTTP/1.1') ? IDLE_MS : -1;
    for (let k = 1; k < lines.length; k++) {
      const line = lines[k]!;
      const colon = line.indexOf(':');
      if (colon <= 0 || line[0] === ' ' || line[0] === '\t') {
        this.fail(codedError('invalid header line', 'HPE_INVALID_HEADER_TOKEN'));
        return;
      }
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      const lower = name.toLowerCase();
      if (lower === 'transfer-encoding') chunked = /(^|,)\s*chunked\s*$/i.test(value);
      else if (lower === 'content-length') length = /^\d+$/.test(value) ? Number(value) : Number.NaN;
      else if (lower === 'connection' && /(^|,)\s*close\s*(,|$)/i.test(value)) idleMs = -1;
      else if (lower === 'keep-alive' && idleMs > 0) idleMs = keepAliveMs(value, idleMs);
      raw.push(name, value);
    }
    if (length !== undefined && Number.isNaN(length) && !chunked) {
      this.fail(codedError('invalid content-length', 'HPE_INVALID_CONTENT_LENGTH'));
      return;
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    // answered: never sent again, and a watch's retry (its request head) is not kept for the watch's life
    this.o.retry = undefined;
    const bodyless = status === 101 || status === 204 || status === 304 || (!chunked && length === 0);
    this.state = chunked ? 'size' : length !== undefined ? 'length' : 'close';
    this.left = chunked ? 0 : (length ?? 0);
    // read up to its close, an answer leaves nothing to keep; nor does one a 101 switched away
    this.idleMs = this.state === 'close' || status === 101 ? -1 : idleMs;
    this.h.onHeaders(status, raw, () => this.resume());
    if (bodyless) this.complete();
  }
}
