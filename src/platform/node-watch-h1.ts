/**
 * Upstream watches over HTTP/1.1 on a connection of their own, read by this file's response reader
 * instead of undici's pool. Over HTTP/1.1 every upstream watch holds a socket for as long as it runs
 * (its pool could share none of them), so undici's per-connection client (its Client, Request, llhttp
 * parser and their closures: ≈ 3.5 KiB of heap per idle upstream watch, measured) buys nothing but
 * memory; what an idle watch keeps here is its socket and one small object (issue 16, goal 5).
 * Node's own node:http client was tried as the reader (an adapter over http.request, every test passing)
 * and measured, same run: 1.3–1.7× the RSS per idle merged watch (≈ 33 KiB against 21–23, over the goal's
 * 32), as each connection keeps a native llhttp parser with slots for 32 header names and values (≈ 2.4
 * KiB of RSS each, over 20,000) plus a ClientRequest and an IncomingMessage (≈ 2 KiB of heap). So the
 * framing is read here, small, unit-tested (node-watch-h1.test.ts) and run by every e2e watch on Node.
 *
 * It is a `Dispatching` as ./node-dispatch.ts reads one: the handler (./node-watch.ts's WatchAnswer) hears
 * the same calls undici's pool makes (onConnect, onHeaders, onData, onComplete, onError), with the same
 * error codes for the timeouts before a head, so what the watch does with its answer does not change.
 *
 * node.ts opens the connections (node:net and node:tls are its to import); this file reads them.
 * The request says `connection: close`: a watch's connection is not reused (a resume opens a new one).
 * Framing: chunked, Content-Length, or the body up to the close; 1xx heads are skipped.
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

/** a response head larger than this is refused (undici's and Node's default is 16 KiB) */
const MAX_HEAD_BYTES = 64 * 1024;
/** a chunk-size or trailer line longer than this is refused */
const MAX_LINE_BYTES = 4096;

/** a socket's read, as far as this file reads it (a Node Buffer: latin1 text is its bytes one to one) */
type Bytes = NodeBuffer & {
  subarray(start?: number, end?: number): Bytes;
  indexOf(byte: number, from?: number): number;
  toString(encoding: 'latin1', start?: number, end?: number): string;
};

/** A connection as this file uses it (node:net's or node:tls's socket: node.ts makes it). */
export interface WatchSocket {
  on(event: 'data', fn: (b: Bytes) => void): unknown;
  on(event: 'end' | 'close', fn: () => void): unknown;
  on(event: 'error', fn: (err: Error) => void): unknown;
  once(event: 'connect' | 'secureConnect', fn: () => void): unknown;
  write(text: string, encoding: 'latin1'): unknown;
  pause(): unknown;
  resume(): unknown;
  destroy(): unknown;
}

/** Where to connect, with the endpoint's TLS settings when `tls`. */
export interface WatchConnect {
  tls: boolean;
  host: string;
  port: number;
  ep: ResolvedEndpoint;
}

/** Opens the connection (node.ts: net.connect or tls.connect, no delay, TCP keep-alive). */
export type WatchConnector = (to: WatchConnect) => WatchSocket;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\0\r\n]/;

/** The request head; throws on a header line that would not be one line. */
function requestHead(o: WatchDispatchOptions, host: string): string {
  let head = `${o.method} ${o.path} HTTP/1.1\r\n`;
  if (o.headers.host === undefined) head += `host: ${host}\r\n`;
  head += 'connection: close\r\n';
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

/** One endpoint's upstream watches over HTTP/1.1 (the endpoint's TLS settings, its open calls). */
export class H1Watches implements Dispatching {
  private readonly open = new Set<H1Call>();

  constructor(
    private readonly ep: ResolvedEndpoint,
    private readonly connect: WatchConnector,
  ) {}

  dispatch(opts: object, handler: object): boolean {
    const o = opts as WatchDispatchOptions;
    const h = handler as WatchCallHandler;
    let url: URL;
    let head: string;
    try {
      url = new URL(o.origin);
      head = requestHead(o, url.host);
    } catch (err) {
      h.onError(err as Error);
      return true;
    }
    const tls = url.protocol === 'https:';
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const port = Number(url.port) || (tls ? 443 : 80);
    const ep = this.ep;
    let socket: WatchSocket;
    try {
      socket = this.connect({ tls, host, port, ep });
    } catch (err) {
      h.onError(err as Error);
      return true;
    }
    // a blackholed host fails within the endpoint's timeout too (as the pool's connect timeout)
    const call = new H1Call(socket, h, this.open, tls, connectTimeoutMs(ep), o.headersTimeout ?? 0);
    this.open.add(call);
    h.onConnect((err) => call.abort(err));
    if (!call.over) socket.write(head, 'latin1');
    return true;
  }

  /** ends every open call (the transport closes) */
  close(): void {
    for (const c of this.open) c.abort(codedError('the transport was closed', 'UND_ERR_DESTROYED'));
    this.open.clear();
  }
}

type State = 'head' | 'size' | 'data' | 'crlf' | 'trailers' | 'length' | 'close';

/** One call on its socket: the response read as it comes, told to the handler. */
class H1Call {
  over = false;
  private state: State = 'head';
  /** the head (or a chunk-size / trailer line) read so far, as latin1 text, when it spans reads */
  private partial: string | undefined;
  /** bytes left of the current chunk (or of a Content-Length body); CRLF bytes left after a chunk */
  private left = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** what a read held back when the handler asked to pause: read first on resume */
  private rest: Bytes | undefined;
  private paused = false;
  /** the connection ended while a pause held bytes back */
  private eof = false;

  constructor(
    private readonly socket: WatchSocket,
    private readonly h: WatchCallHandler,
    private readonly open: Set<H1Call>,
    tls: boolean,
    connectMs: number,
    headersMs: number,
  ) {
    socket.on('data', (b) => this.feed(b));
    socket.on('end', () => this.ended());
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => {
      if (this.rest) this.eof = true;
      else this.fail(codedError('other side closed', 'UND_ERR_SOCKET'));
    });
    if (connectMs > 0)
      this.timer = setTimeout(
        () => this.fail(codedError('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT')),
        connectMs,
      );
    socket.once(tls ? 'secureConnect' : 'connect', () => this.connected(headersMs));
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

  abort(err: Error): void {
    this.fail(err);
  }

  private finish(): void {
    this.over = true;
    this.open.delete(this);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.partial = undefined;
    this.rest = undefined;
    this.socket.destroy();
  }

  private fail(err: Error): void {
    if (this.over) return;
    this.finish();
    this.h.onError(err);
  }

  private complete(): void {
    if (this.over) return;
    this.finish();
    this.h.onComplete([]);
  }

  private ended(): void {
    // what a pause held back is read first (on resume): the end comes after it
    if (this.rest) {
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
    if (this.paused || this.over) return;
    if (this.eof) this.ended();
    else this.socket.resume();
  }

  /** hands body bytes on; false: the handler asked to pause (the rest of `b` from `next` is kept) */
  private deliver(bytes: Bytes, b: Bytes, next: number): boolean {
    if (this.h.onData(bytes) || this.over) return !this.over;
    this.paused = true;
    if (next < b.length) this.rest = b.subarray(next);
    this.socket.pause();
    return false;
  }

  /** reads `b` as far as it goes */
  private feed(b: Bytes): void {
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
          else if (line.text === '') this.complete();
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
              this.complete();
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
    const all = (this.partial ?? '') + b.toString('latin1', i);
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
      raw.push(name, value);
    }
    if (length !== undefined && Number.isNaN(length) && !chunked) {
      this.fail(codedError('invalid content-length', 'HPE_INVALID_CONTENT_LENGTH'));
      return;
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const bodyless = status === 101 || status === 204 || status === 304 || (!chunked && length === 0);
    this.state = chunked ? 'size' : length !== undefined ? 'length' : 'close';
    this.left = chunked ? 0 : (length ?? 0);
    this.h.onHeaders(status, raw, () => this.resume());
    if (bodyless) this.complete();
  }
}
