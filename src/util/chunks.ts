/**
 * A body read chunk by chunk into a callback, for streams held open for hours (watch bodies): one
 * reader and one pending read, instead of a chain of Web stream layers (pipeThrough, TransformStream,
 * async generators) whose promises and closures every idle watch would keep.
 *
 * A runtime may read its own bodies more cheaply (Node: the upstream's Node stream behind the Web body,
 * read by its 'data' events, src/platform/node.ts registers it with `useNativeChunks`); everything else
 * reads the Web stream.
 */

export interface ChunkReading {
  /** resolves when the body ends (or was cancelled), rejects when it breaks or `onChunk` throws */
  done: Promise<void>;
  /** stop reading and release the body (the upstream request closes) */
  cancel(): void;
}

/** A runtime's own reader for bodies it made, or undefined for a body it does not know. */
export type NativeChunks = (
  body: ReadableStream<Uint8Array>,
  onChunk: (chunk: Uint8Array) => void,
) => ChunkReading | undefined;

let native: NativeChunks | undefined;

/** Registers the runtime's own body reader (called once by the runtime's platform module). */
export function useNativeChunks(reader: NativeChunks): void {
  native = reader;
}

/**
 * Reads `body` to its end, calling `onChunk` synchronously for every chunk; an exception from `onChunk`
 * cancels the body and rejects `done` with it.
 */
export function readChunks(
  body: ReadableStream<Uint8Array>,
  onChunk: (chunk: Uint8Array) => void,
): ChunkReading {
  return native?.(body, onChunk) ?? webChunks(body, onChunk);
}

function webChunks(body: ReadableStream<Uint8Array>, onChunk: (chunk: Uint8Array) => void): ChunkReading {
  const reader = body.getReader();
  let cancelled = false;
  const cancel = () => {
    if (cancelled) return;
    cancelled = true;
    reader.cancel().catch(() => {});
  };
  const done = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || cancelled) return;
        onChunk(value);
      }
    } catch (err) {
      cancel();
      throw err;
    }
  })();
  return { done, cancel };
}
