/**
 * A body's reader that takes `min` bytes or more at a time where the runtime can: workerd hands a fetch
 * body to JavaScript 4 KiB a read, and each read costs the relay about what the bytes cost to move
 * (bench/lib/floor-worker.mjs: 34 ms of CPU per MiB read chunk by chunk, 8 piped natively), so on
 * workerd's byte streams it reads with `readAtLeast` (a workerd extension of the BYOB reader); anywhere
 * else one chunk a read, as a default reader gives it.
 */

export interface BulkReader {
  /**
   * at least `min` bytes (fewer only at the end; `min` 1: what is there, up to `room`), or undefined at
   * the end
   */
  read(min: number, room?: number): Promise<Uint8Array | undefined>;
  cancel(reason?: unknown): Promise<void>;
}

type AtLeastReader = ReadableStreamBYOBReader & {
  readAtLeast?: (min: number, view: Uint8Array) => Promise<ReadableStreamReadResult<Uint8Array>>;
};

/** the least a read asks the runtime for room for (what one relay frame carries) */
const ROOM = 64 * 1024;

export function bulkReader(body: ReadableStream<Uint8Array>): BulkReader {
  let byob: AtLeastReader | undefined;
  try {
    byob = body.getReader({ mode: 'byob' }) as AtLeastReader;
  } catch {
    // not a byte stream
  }
  if (byob && typeof byob.readAtLeast !== 'function') {
    byob.releaseLock();
    byob = undefined;
  }
  if (byob) {
    const r = byob;
    const readAtLeast = byob.readAtLeast!.bind(byob);
    let ended = false;
    return {
      async read(min, room = ROOM) {
        if (ended) return undefined;
        const { value, done } = await readAtLeast(min, new Uint8Array(Math.max(min, room)));
        if (!done) return value;
        ended = true;
        // workerd ends with the last bytes, or with none (an empty view)
        const last = value as Uint8Array | undefined;
        return last?.length ? last : undefined;
      },
      cancel: (reason) => r.cancel(reason),
    };
  }
  const r = body.getReader();
  return {
    async read() {
      const { value, done } = await r.read();
      return done ? undefined : value;
    },
    cancel: (reason) => r.cancel(reason),
  };
}
