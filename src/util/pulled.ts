/**
 * A body read by pulling, one chunk per read, with nothing read from the upstream beyond what was asked
 * for: a merged list's sources, most of which wait their turn while the merge writes another cluster's
 * items. What a waiting body holds is the one chunk its head came in; the rest stays in the connection
 * (the upstream's send buffer and our socket's), not in this process's memory, where hundreds of bodies
 * read ahead would live through collections (and, as external memory, start them).
 *
 * A runtime may read its own bodies so (Node: straight from undici's parser, the connection paused
 * between reads; src/platform/node-list.ts registers it with `useNativePull`); any other body is read
 * with its Web reader.
 */

/** The part of a Web ReadableStreamDefaultReader a pulling consumer uses. */
export interface PullReader {
  /** the next chunk, or done; a cancel while a read waits ends that read as done */
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  /** stop reading and release the body (the upstream request closes) */
  cancel(reason?: unknown): Promise<void>;
  releaseLock(): void;
}

/**
 * A runtime's own pulling reader for a body (or an answer) it made, or undefined for one it does not know.
 * Given the answer, it may read it without ever making its Web body (Node: ≈ 60 µs per ReadableStream).
 */
export type NativePull = (body: ReadableStream<Uint8Array> | Response) => PullReader | undefined;

let native: NativePull | undefined;

/** Registers the runtime's own pulling reader (called once by the runtime's platform module). */
export function useNativePull(reader: NativePull): void {
  native = reader;
}

/** A pulling reader of `body`: the runtime's own when it made the body, else the body's Web reader. */
export function pullReader(body: ReadableStream<Uint8Array>): PullReader {
  return native?.(body) ?? body.getReader();
}

/** A pulling reader of an answer's body (null: it has none): the runtime's own when it made the answer. */
export function answerReader(res: Response): PullReader | null {
  const own = native?.(res);
  if (own) return own;
  return res.body ? pullReader(res.body) : null;
}
