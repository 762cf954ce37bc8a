/**
 * A body read chunk by chunk into a sink, for streams held open for hours (watch bodies): one reader,
 * and no chain of Web stream layers (pipeThrough, TransformStream, async generators) or promises whose
 * closures every idle watch would keep.
 *
 * A runtime may read its own bodies more cheaply (Node: straight from the upstream's parser, or from the
 * Node stream behind the Web body; src/platform/node.ts registers it with `useNativeChunks`); everything
 * else reads the Web stream.
 */

/** Where a body's chunks go. Exactly one of `end` and `fail` is called, once. */
export interface ChunkSink {
  /** a chunk, synchronously as it comes (the caller may reuse its bytes after); throwing fails the reading */
  chunk(chunk: Uint8Array): void;
  /** the body ended, or the reading was cancelled */
  end(): void;
  /** the body broke, or `chunk` threw (the body is cancelled then) */
  fail(err: unknown): void;
}

export interface ChunkReading {
  /** stop reading and release the body (the upstream request closes); the sink's `end` follows */
  cancel(): void;
  /** stop taking chunks for now (the upstream is held back, as TCP holds a slow reader's sender) */
  pause?(): void;
  /** take chunks again after `pause` */
  resume?(): void;
}

/** A runtime's own reader for bodies it made, or undefined for a body it does not know. */
export type NativeChunks = (body: ReadableStream<Uint8Array>, sink: ChunkSink) => ChunkReading | undefined;

let native: NativeChunks | undefined;

/** Registers the runtime's own body reader (called once by the runtime's platform module). */
export function useNativeChunks(reader: NativeChunks): void {
  native = reader;
}

/** Reads `body` to its end into `sink`. */
export function readChunks(body: ReadableStream<Uint8Array>, sink: ChunkSink): ChunkReading {
  return native?.(body, sink) ?? webChunks(body, sink);
}

function webChunks(body: ReadableStream<Uint8Array>, sink: ChunkSink): ChunkReading {
  const reader = body.getReader();
  let over = false;
  /** while paused: what resumes the pump */
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const cancel = () => {
    if (over) return;
    over = true;
    reader.cancel().catch(() => {});
    open?.();
    sink.end();
  };
  const pause = () => {
    gate ??= new Promise<void>((r) => {
      open = r;
    });
  };
  const resume = () => {
    const o = open;
    gate = open = undefined;
    o?.();
  };
  const pump = async () => {
    for (;;) {
      if (gate) await gate;
      if (over) return;
      const { value, done } = await reader.read();
      if (over) return;
      if (done) {
        over = true;
        return sink.end();
      }
      sink.chunk(value);
    }
  };
  pump().catch((err: unknown) => {
    if (over) return;
    over = true;
    reader.cancel().catch(() => {});
    sink.fail(err);
  });
  return { cancel, pause, resume };
}

/**
 * A body written chunk by chunk (a merged watch's response), in the runtime's own cheapest form: Node
 * hands its server a Node stream behind the Web body (piped straight to the socket, no Web reader per
 * open watch); elsewhere it is undefined and the writer makes a Web ReadableStream itself.
 */
export interface PushBody {
  /** the body to answer with (the writer keeps its `writer`, not this stream) */
  body: ReadableStream<Uint8Array>;
  writer: PushWriter;
}

export interface PushWriter {
  /** queues `chunk`; the bytes queued that the reader has not taken yet */
  push(chunk: Uint8Array): number;
  /**
   * queues `parts` (`bytes` in all) as one piece of the body, one HTTP chunk where the runtime frames
   * them (Node: one chunk frame, one socket write); the bytes queued, or undefined if it did not take
   * them (the writer pushes them itself)
   */
  pushAll?(parts: readonly Uint8Array[], bytes: number): number | undefined;
  /** `drained` runs once when the reader has taken what is queued (at once if nothing is) */
  onDrain?(drained: () => void): void;
  /** the end of the body (after the chunks queued) */
  close(): void;
}

/** Makes a push body; `cancelled` runs once if the reader goes away first. */
export type PushBodies = (cancelled: () => void) => PushBody;

let pushBodies: PushBodies | undefined;

/** Registers the runtime's own push bodies (called once by the runtime's platform module). */
export function usePushBodies(make: PushBodies): void {
  pushBodies = make;
}

/** A push body in the runtime's own form, or undefined where there is none. */
export function pushBody(cancelled: () => void): PushBody | undefined {
  return pushBodies?.(cancelled);
}
