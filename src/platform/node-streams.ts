/**
 * Node streams on either side of a merged watch (registered by node.ts through src/util/chunks.ts): an
 * upstream body's Node stream read by its 'data' events, and the answer written by the merger straight
 * into the Node server's response. Either way an open watch holds no Web reader, pending read, Readable
 * or pipe for it. Structural types only: node:stream itself is node.ts's to import.
 */
import type { ChunkReading, ChunkSink, PushBodies } from '../util/chunks.ts';

/** a Node Buffer, as far as this file reads it */
type NodeBuffer = Uint8Array & { toString(encoding: 'latin1'): string };

/** What {@link nodeStreamChunks} needs of a Node Readable (node.ts's to import). */
export interface NodeReadable {
  on(event: 'data', fn: (chunk: NodeBuffer) => void): unknown;
  on(event: 'error', fn: (err: unknown) => void): unknown;
  once(event: 'end' | 'close', fn: () => void): unknown;
  once(event: 'error', fn: (err: unknown) => void): unknown;
  destroy(): unknown;
}

/**
 * A Node stream (the one behind a Web body of node.ts's) read by its 'data' events into `sink`: no Web
 * stream, reader or pending promise per body.
 */
export function nodeStreamChunks(
  src: NodeReadable | undefined,
  sink: ChunkSink,
  mapError: (err: unknown) => unknown,
): ChunkReading | undefined {
  if (!src) return undefined;
  let over = false;
  const destroy = () => {
    src.on('error', () => {});
    src.destroy();
  };
  const fail = (err: unknown) => {
    if (over) return;
    over = true;
    destroy();
    sink.fail(err);
  };
  src.on('data', (c: NodeBuffer) => {
    if (over) return;
    try {
      // a plain view: what the reader keeps of it is copied (Buffer#slice would not copy)
      sink.chunk(new Uint8Array(c.buffer, c.byteOffset, c.byteLength));
    } catch (err) {
      fail(err);
    }
  });
  src.once('end', () => {
    if (over) return;
    over = true;
    sink.end();
  });
  src.once('error', (err) => fail(mapError(err)));
  src.once('close', () => fail(new TypeError('terminated: the upstream body closed before its end')));
  return {
    cancel() {
      if (over) return;
      over = true;
      destroy();
      sink.end();
    },
  };
}

/** What a direct body writes to: the Node server's response (deploy/node/http.ts's to hand over). */
export interface DirectOut {
  write(chunk: Uint8Array): boolean;
  readonly writableLength: number;
  end(): void;
  /** the server response's 'drain': its backlog was written out */
  once?(event: 'drain', listener: () => void): unknown;
}

/**
 * What of node:http's HTTP/1.1 ServerResponse the framed writer reads (its own fields, not all of them
 * documented): a chunked answer whose head is on its socket, nothing of it queued in the response.
 */
interface ChunkedResponse extends DirectOut {
  req?: { httpVersionMajor?: number; httpVersionMinor?: number; method?: string };
  chunkedEncoding?: boolean;
  headersSent?: boolean;
  outputSize?: number;
  _hasBody?: boolean;
  socket?: FrameSocket | null;
}

/** the response's socket, as far as the framed writer writes to it */
interface FrameSocket {
  write(chunk: Uint8Array): boolean;
  cork(): void;
  uncork(): void;
  readonly writableLength: number;
  readonly destroyed: boolean;
  once(event: 'drain', listener: () => void): unknown;
}

/** the socket a chunked HTTP/1.1 answer may write its own chunk frames to, or undefined (h2, HTTP/1.0, HEAD) */
function frameSocket(out: DirectOut): FrameSocket | undefined {
  const r = out as ChunkedResponse;
  const s = r.socket;
  if (r.chunkedEncoding !== true || r.headersSent !== true || r._hasBody === false || r.outputSize !== 0) {
    const why = unexplainedRefusal(r);
    if (why) refusedOnce(why);
    return undefined;
  }
  return s && !s.destroyed && typeof s.cork === 'function' ? s : undefined;
}

/**
 * Why a node:http answer is not framed by its body when neither its protocol (HTTP/2, HTTP/1.0, HEAD) nor
 * its state (bodyless, or queued behind a pipelined answer) says so: the response's own fields are not the
 * ones known, as after a Node upgrade that changed them. Undefined for those reasons, and for what is not
 * a node:http answer (a test's fake).
 */
export function unexplainedRefusal(r: {
  req?: { httpVersionMajor?: number; httpVersionMinor?: number; method?: string };
  chunkedEncoding?: unknown;
  outputSize?: unknown;
  _hasBody?: unknown;
}): string | undefined {
  const req = r.req;
  if (req?.httpVersionMajor !== 1 || req.httpVersionMinor === 0 || req.method === 'HEAD') return undefined;
  for (const [field, type] of [
    ['chunkedEncoding', 'boolean'],
    ['outputSize', 'number'],
    ['_hasBody', 'boolean'],
  ] as const)
    if (typeof r[field] !== type) return `its ${field} is ${typeof r[field]}, not a ${type}`;
  // a bodyless answer (204, 304) has no frames to write
  if (r._hasBody === false) return undefined;
  if (r.chunkedEncoding !== true) return 'an HTTP/1.1 answer without a length is not chunkedEncoding';
  return undefined;
}

let refusalTold = false;

/** once per process: merged watches then leave through res.write, a frame per tick no longer assured */
function refusedOnce(why: string): void {
  if (refusalTold) return;
  refusalTold = true;
  console.warn(
    `fleet: merged watches are written through node:http's response, not as chunk frames of their own (${why})`,
  );
}

/** a frame this small is copied into one array (one socket write); a larger one goes as its parts */
const FRAME_COPY = 16 * 1024;
const CRLF = new Uint8Array([13, 10]);

/**
 * `parts` (`bytes` in all) as one HTTP/1.1 chunk frame on `s`: what node:http's write does for one
 * chunk (`<hex>\r\n`, the bytes, `\r\n`), without its four writes, cork and tick per call.
 */
function writeFrame(s: FrameSocket, parts: readonly Uint8Array[], bytes: number): void {
  const hex = bytes.toString(16);
  if (bytes <= FRAME_COPY) {
    const f = new Uint8Array(hex.length + bytes + 4);
    let at = 0;
    for (let k = 0; k < hex.length; k++) f[at++] = hex.charCodeAt(k);
    f[at++] = 13;
    f[at++] = 10;
    for (const p of parts) {
      f.set(p, at);
      at += p.length;
    }
    f[at++] = 13;
    f[at] = 10;
    s.write(f);
    return;
  }
  const head = new Uint8Array(hex.length + 2);
  for (let k = 0; k < hex.length; k++) head[k] = hex.charCodeAt(k);
  head[hex.length] = 13;
  head[hex.length + 1] = 10;
  s.cork();
  s.write(head);
  for (const p of parts) s.write(p);
  s.write(CRLF);
  s.uncork();
}

/** How the server follows a direct body: each chunk written (a watch's event boundaries), the end. */
export interface DirectHooks {
  chunk?(chunk: Uint8Array): void;
}

/**
 * A push body the Node server writes straight into its response (attachDirect): an open merged watch
 * holds no Readable, pipe or Web reader for its answer, only this and the Web body it is behind. Until
 * the server attaches it the chunks wait here; read as a Web body instead (in-process callers, tests),
 * they move into that stream on its first pull. Attached to a chunked HTTP/1.1 answer, it writes a
 * tick's lines (pushAll) as one chunk frame of its own on the socket (docs/benchmarks.md, "on the wire").
 */
class DirectBody {
  /**
   * The Web body and its controller, let go of once the server writes the body: the Response is gone by
   * then, and the stream (≈ 1.8 KiB with its controller and algorithms) would stay for the watch's life.
   */
  body: ReadableStream<Uint8Array> | undefined;
  private out: DirectOut | undefined;
  /** the answer's socket, when the body writes its chunk frames there itself (frameSocket) */
  private socket: FrameSocket | undefined;
  private hooks: DirectHooks | undefined;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** chunks before the server or a Web reader took the body */
  private waiting: Uint8Array[] | undefined;
  private waitingBytes = 0;
  private web = false;
  /** who waits for the reader to catch up (the watch's paused upstreams) */
  private drained: (() => void) | undefined;
  private closed = false;
  private over = false;

  constructor(private readonly cancelled: () => void) {
    // itself the stream's source (start, pull, cancel): no closures per open watch
    const body = new ReadableStream<Uint8Array>(this, { highWaterMark: 0 });
    this.body = body;
    directBodies.set(body, this);
  }

  push(chunk: Uint8Array): number {
    if (this.over) return 0;
    if (this.out) {
      this.hooks?.chunk?.(chunk);
      this.out.write(chunk);
      return this.out.writableLength;
    }
    if (this.web) {
      this.controller!.enqueue(chunk);
      return -(this.controller!.desiredSize ?? 0);
    }
    this.waiting ??= [];
    this.waiting.push(chunk);
    this.waitingBytes += chunk.byteLength;
    return this.waitingBytes;
  }

  pushAll(parts: readonly Uint8Array[], bytes: number): number | undefined {
    const s = this.socket;
    if (this.over || !s || !this.out) return undefined;
    if (bytes === 0) return this.out.writableLength;
    this.hooks?.chunk?.(parts[parts.length - 1]!);
    // a socket gone meanwhile: its close ends the body (the server's 'close' → cancel)
    if (!s.destroyed) writeFrame(s, parts, bytes);
    return this.out.writableLength;
  }

  onDrain(drained: () => void): void {
    const out = this.out;
    if (out) {
      // frames written to the socket itself: the response would not say when they drained
      const s = this.socket;
      if (out.writableLength === 0) drained();
      else if (s) s.once('drain', drained);
      else if (!out.once) drained();
      else out.once('drain', drained);
      return;
    }
    // not yet written by the server, or read as a Web stream: the next attach or pull
    this.drained = drained;
  }

  private tellDrained(): void {
    const d = this.drained;
    this.drained = undefined;
    d?.();
  }

  close(): void {
    if (this.over || this.closed) return;
    this.closed = true;
    if (this.out) {
      this.over = true;
      this.out.end();
    } else if (this.web) {
      this.over = true;
      this.controller!.close();
    }
  }

  /** the server writes the body from now on (what waited first); false if a Web reader has it already */
  attach(out: DirectOut, hooks?: DirectHooks): boolean {
    if (this.web || this.out || (this.over && !this.closed)) return false;
    this.out = out;
    this.hooks = hooks;
    this.body = undefined;
    this.controller = undefined;
    const waiting = this.waiting;
    this.waiting = undefined;
    this.waitingBytes = 0;
    for (const c of waiting ?? []) {
      hooks?.chunk?.(c);
      out.write(c);
    }
    // from now on frames of its own, once nothing of the answer waits in the response
    this.socket = frameSocket(out);
    if (this.closed) {
      this.over = true;
      out.end();
    } else if (this.drained) {
      const d = this.drained;
      this.drained = undefined;
      this.onDrain(d);
    }
    return true;
  }

  /** the reader went away before the end (the client, or the server's drain; also the Web body's cancel) */
  cancel(): void {
    if (this.over) return;
    this.over = true;
    this.out = undefined;
    this.socket = undefined;
    this.waiting = undefined;
    if (!this.closed) this.cancelled();
  }

  /** the Web body's source: its controller */
  start(c: ReadableStreamDefaultController<Uint8Array>): void {
    this.controller = c;
  }

  /** the Web body's source: read as a Web stream, not by the server */
  pull(): void {
    if (this.web || this.out) {
      this.tellDrained();
      return;
    }
    this.web = true;
    if (this.body) directBodies.delete(this.body);
    for (const c of this.waiting ?? []) this.controller!.enqueue(c);
    this.waiting = undefined;
    if (this.closed) {
      this.over = true;
      this.controller!.close();
    }
    this.tellDrained();
  }
}

const directBodies = new WeakMap<ReadableStream<Uint8Array>, DirectBody>();

/** Push bodies the Node server writes straight into its response (see DirectBody). */
export const directPushBodies: PushBodies = (cancelled) => {
  const d = new DirectBody(cancelled);
  return { body: d.body!, writer: d };
};

/**
 * The server's side: a Web body made by directPushBodies is written into `out` from now on. Returns how
 * to stop writing it (the body's writer is told its reader went away), or undefined when `body` is not
 * one (or is read as a Web stream already).
 */
export function attachDirect(
  body: ReadableStream<Uint8Array>,
  out: DirectOut,
  hooks?: DirectHooks,
): { cancel(): void } | undefined {
  const d = directBodies.get(body);
  if (!d) return undefined;
  directBodies.delete(body);
  return d.attach(out, hooks) ? d : undefined;
}
