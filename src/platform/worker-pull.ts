/**
 * A merged list's sources read by pulling on Workers (src/util/pulled.ts): workerd's default reader hands
 * a fetch body over 4 KiB a read, and each read in JavaScript costs about what moving the bytes costs
 * (bench/lib/floor-worker*.mjs: 29 ms of CPU per MiB read 4 KiB a read, 10 read 64 KiB a read, 8 piped
 * natively; docs/benchmarks.md). Its BYOB reader's `readAtLeast(1, room)` answers with what the
 * connection has, up to 64 KiB (4 KiB for the first read, the head), without waiting for more.
 */
import type { PullReader } from '../util/pulled.ts';

const ROOM = 64 * 1024;
/**
 * the first read's room: a source's head, held while it waits its turn (hundreds of relayed sources share
 * one isolate's memory), keeps the 4 KiB a default read took
 */
const HEAD_ROOM = 4 * 1024;

type AtLeastReader = ReadableStreamBYOBReader & {
  readAtLeast?: (min: number, view: Uint8Array) => Promise<ReadableStreamReadResult<Uint8Array>>;
};

/** workerd's reader of a byte stream (a fetch body), or undefined for any other body (a JavaScript stream) */
export function workerPullReader(x: ReadableStream<Uint8Array> | Response): PullReader | undefined {
  const body = x instanceof Response ? x.body : x;
  if (!body) return undefined;
  let r: AtLeastReader;
  try {
    r = body.getReader({ mode: 'byob' }) as AtLeastReader;
  } catch {
    return undefined;
  }
  if (typeof r.readAtLeast !== 'function') {
    r.releaseLock();
    return undefined;
  }
  const readAtLeast = r.readAtLeast.bind(r);
  let ended = false;
  let room = HEAD_ROOM;
  return {
    async read() {
      if (ended) return { done: true, value: undefined };
      const { done, value } = await readAtLeast(1, new Uint8Array(room));
      room = ROOM;
      const got = value as Uint8Array | undefined;
      if (!done) return { done: false, value: got! };
      ended = true;
      // the end comes as an empty view, or with the last bytes
      return got?.length ? { done: false, value: got } : { done: true, value: undefined };
    },
    cancel: (reason) => r.cancel(reason),
    releaseLock: () => r.releaseLock(),
  };
}
