/**
 * Node streams on either side of a merged watch (registered by node.ts through src/util/chunks.ts): an
 * upstream body's Node stream read by its 'data' events, and the answer written as a Node stream the Node
 * server pipes into the client's socket. Either way an open watch holds no Web stream, reader or pending
 * read for it. Structural types only: node:stream itself is node.ts's to import.
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

/** What {@link nodePushBodies} needs of a Node Readable it makes. */
export interface PushedReadable {
  push(chunk: Uint8Array | null): boolean;
  readonly readableLength: number;
}

/** The Readable's implementation hooks (node:stream's `read` and `destroy` options). */
export interface PushedReadableOptions {
  read(): void;
  destroy(err: Error | null, cb: (err?: Error | null) => void): void;
}

/**
 * Push bodies (src/util/chunks.ts) as Node streams behind Web bodies (`toWeb`, node.ts's toWebStream): the
 * Node server pipes them straight into the client's socket, so an open merged watch holds a Readable there
 * instead of a Web stream, its reader and a pending read. Destroyed before its end (the client went away,
 * or the server drained) is the writer's `cancelled`.
 */
export function nodePushBodies<R extends PushedReadable>(
  make: (o: PushedReadableOptions) => R,
  toWeb: (src: R) => ReadableStream<Uint8Array>,
): PushBodies {
  return (cancelled) => {
    let over = false;
    const src = make({
      read() {},
      destroy(err, cb) {
        if (!over) {
          over = true;
          cancelled();
        }
        cb(err);
      },
    });
    return {
      body: toWeb(src),
      writer: {
        push(chunk) {
          if (!over) src.push(chunk);
          return src.readableLength;
        },
        close() {
          if (over) return;
          over = true;
          src.push(null);
        },
      },
    };
  };
}
