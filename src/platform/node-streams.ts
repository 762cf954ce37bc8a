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

/** How the server follows a direct body: each chunk written (a watch's event boundaries), the end. */
export interface DirectHooks {
  chunk?(chunk: Uint8Array): void;
}

/**
 * A push body the Node server writes straight into its response (attachDirect): an open merged watch
 * holds no Readable, pipe or Web reader for its answer, only this and the Web body it is behind. Until
 * the server attaches it the chunks wait here; read as a Web body instead (in-process callers, tests),
 * they move into that stream on its first pull.
 */
class DirectBody {
  /**
   * The Web body and its controller, let go of once the server writes the body: the Response is gone by
   * then, and the stream (≈ 1.8 KiB with its controller and algorithms) would stay for the watch's life.
   */
  body: ReadableStream<Uint8Array> | undefined;
  private out: DirectOut | undefined;
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

  onDrain(drained: () => void): void {
    const out = this.out;
    if (out) {
      if (out.writableLength === 0 || !out.once) drained();
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
