/**
 * Reading a request body with a size limit enforced while it arrives (chunked bodies announce no length),
 * so an oversized or endless body is never held whole.
 */
import { concatBytes } from './bytes.ts';

export interface ReadLimitedOptions {
  /**
   * After the limit is passed, read away up to this many more bytes before giving up, so an HTTP/1.1
   * client that is still sending is around to read the 413 (closing mid-upload makes clients report a
   * reset instead). Default 0: cancel at once.
   */
  drainBytes?: number;
  /** Aborting stops the read (a body read timeout, or the client gone): the result is `aborted`. */
  signal?: AbortSignal;
}

export type ReadLimitedResult =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: 'too-large'; limit: number }
  | { ok: false; reason: 'aborted' };

/**
 * Reads `body` whole if it has at most `limit` bytes. A `Content-Length` above the limit should be
 * refused by the caller before calling this; this is the check for what the header does not say.
 */
export async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  opts: ReadLimitedOptions = {},
): Promise<ReadLimitedResult> {
  if (!body) return { ok: true, bytes: new Uint8Array(0) };
  const { signal } = opts;
  const reader = body.getReader();
  let aborted = false;
  const onAbort = () => {
    aborted = true;
    reader.cancel(signal?.reason).catch(() => {});
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const r = await reader.read();
      if (aborted) return { ok: false, reason: 'aborted' };
      if (r.done) return { ok: true, bytes: concatBytes(chunks, size) };
      size += r.value.length;
      if (size > limit) {
        await drain(reader, opts.drainBytes ?? 0);
        return { ok: false, reason: 'too-large', limit };
      }
      chunks.push(r.value);
    }
  } catch (err) {
    if (aborted) return { ok: false, reason: 'aborted' };
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Reads and drops up to `budget` bytes; cancels only a body that has not ended (an ended one may sit on a
 * keep-alive connection that can carry the next request). */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let read = 0;
  let ended = false;
  while (!ended && read <= budget && budget > 0) {
    const r = await reader.read().catch(() => ({ done: true as const, value: undefined }));
    ended = r.done;
    read += r.value?.length ?? 0;
  }
  if (!ended) await reader.cancel().catch(() => {});
}
