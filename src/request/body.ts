/**
 * Request bodies as the fleet reads them: never more than the limit, never for longer than the deadline,
 * whatever the framing (Content-Length or chunked). Runtime-neutral (Web streams only).
 *
 * One reader does the counting, the deadline, the abort and the drain (`LimitedReader`); it is used two
 * ways: as a stream handed on to whoever reads later (`limitBody`, nothing buffered), and read whole
 * (`readLimited`, for the routes and the intake that need the bytes).
 */
import { concatBytes } from '../util/bytes.ts';

/** The body grew past the limit while being read (413 RequestEntityTooLarge). */
export class BodyTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`Request entity too large: limit is ${maxBytes}`);
    this.name = 'BodyTooLargeError';
  }
}

/** The body did not arrive in time (408): a client that starts a body and never ends it holds nothing. */
export class BodyTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the request body was not received within ${Math.round(timeoutMs / 1000)}s`);
    this.name = 'BodyTimeoutError';
  }
}

/**
 * The body could not be read as sent (bad framing the runtime let through, a connection broken
 * mid-body): a 400, the client's doing, never a 500. The runtime's own error is the `cause`.
 */
export class BodyReadError extends Error {
  constructor(cause: unknown) {
    super(`the request body could not be read: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'BodyReadError';
  }
}

export interface BodyLimits {
  /** refuse past this many bytes; undefined where the runtime enforces a declared Content-Length */
  maxBytes?: number;
  /** the whole body must arrive within this long after the first read; undefined: no deadline */
  timeoutMs?: number;
  /**
   * After the limit is passed, read away up to this many more bytes before letting go of the source, so
   * an HTTP/1.1 client still sending is around to read the 413 (closing mid-upload makes clients report
   * a reset instead). 0: cancel at once.
   */
  drainBytes?: number;
  /** aborting stops the read (and a drain): the read fails with the signal's reason */
  signal?: AbortSignal;
}

/** Errors of this module, and an abort, go on as they are; anything else the source throws is a BodyReadError. */
function asBodyError(err: unknown): unknown {
  if (
    err instanceof BodyTooLargeError ||
    err instanceof BodyTimeoutError ||
    err instanceof BodyReadError ||
    (err as Error)?.name === 'AbortError'
  )
    return err;
  return new BodyReadError(err);
}

/**
 * Reads and discards up to `budget` bytes, then cancels; a source that ends meanwhile is not cancelled
 * (an ended body may sit on a keep-alive connection that can carry the next request).
 */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  let rest = budget;
  try {
    while (rest > 0) {
      const r = await reader.read();
      if (r.done) return;
      rest -= r.value.byteLength;
    }
    await reader.cancel();
  } catch {
    // the client went away: nothing left to drain
  }
}

/**
 * The one body reader: `read()` gives the next chunk (undefined at the end), counting against
 * `maxBytes` and failing with BodyTooLargeError past it (after the drain when `awaitDrain`, else with the
 * drain going on behind), with BodyTimeoutError when the body is not complete `timeoutMs` after the first
 * read (the deadline starts there, so a body nobody reads holds no timer), and with the signal's reason
 * when it aborts. Timeout and abort also end a drain under way. Pulls only when asked (nothing buffered).
 */
class LimitedReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private size = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** set once: what every later read fails with */
  private failure: unknown;
  private failed = false;
  private ended = false;

  constructor(
    src: ReadableStream<Uint8Array>,
    private readonly limits: BodyLimits,
    private readonly awaitDrain: boolean,
    /** told at once when the deadline or the signal fails the read (a stream errors its consumer) */
    private readonly onFail?: (err: unknown) => void,
  ) {
    this.reader = src.getReader();
    const signal = limits.signal;
    if (signal?.aborted) this.fail(signal.reason);
    else signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  private readonly onAbort = () => this.fail(this.limits.signal?.reason);

  /** the deadline or the signal: every later read fails; a pending read (or a drain) ends with the source */
  private fail(err: unknown): void {
    if (!this.failed) {
      this.failed = true;
      this.failure = err;
      this.onFail?.(err);
    }
    this.finish();
    void this.reader.cancel(err).catch(() => {});
  }

  /** no more timer or listener (the body ended, failed or was let go) */
  private finish(): void {
    this.ended = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.limits.signal?.removeEventListener('abort', this.onAbort);
  }

  async read(): Promise<Uint8Array | undefined> {
    if (this.failed) throw this.failure;
    if (this.ended) return undefined;
    const ms = this.limits.timeoutMs;
    if (ms !== undefined) this.timer ??= setTimeout(() => this.fail(new BodyTimeoutError(ms)), ms);
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await this.reader.read();
    } catch (err) {
      if (this.failed) throw this.failure;
      this.failed = true;
      this.failure = asBodyError(err);
      this.finish();
      throw this.failure;
    }
    if (this.failed) throw this.failure;
    if (r.done) {
      this.finish();
      return undefined;
    }
    this.size += r.value.byteLength;
    const max = this.limits.maxBytes;
    if (max !== undefined && this.size > max) {
      const err = new BodyTooLargeError(max);
      this.failed = true;
      this.failure = err;
      // the deadline and the signal still bound the drain; then nothing is left to hold
      const drained = drain(this.reader, this.limits.drainBytes ?? 0).finally(() => this.finish());
      if (this.awaitDrain) await drained;
      throw err;
    }
    return r.value;
  }

  cancel(reason?: unknown): Promise<void> {
    this.finish();
    return this.reader.cancel(reason).catch(() => {});
  }
}

/**
 * `src` limited while it is read: pulled only as the consumer reads (backpressure, nothing buffered
 * here), failing with BodyTooLargeError past `maxBytes` (what the client still sends is read away
 * behind it, up to `drainBytes`, by default 4 × the limit) and with BodyTimeoutError when the body is
 * not complete `timeoutMs` after the first read.
 */
export function limitBody(src: ReadableStream<Uint8Array>, limits: BodyLimits): ReadableStream<Uint8Array> {
  let reader: LimitedReader;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const drainBytes = limits.drainBytes ?? (limits.maxBytes ?? 0) * 4;
        reader = new LimitedReader(src, { ...limits, drainBytes }, false, (err) => controller.error(err));
      },
      async pull(controller) {
        let chunk: Uint8Array | undefined;
        try {
          chunk = await reader.read();
        } catch (err) {
          controller.error(err);
          return;
        }
        if (chunk) controller.enqueue(chunk);
        else controller.close();
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

export interface ReadLimitedOptions {
  /** see BodyLimits.drainBytes (here read away before the answer comes back); default 0 */
  drainBytes?: number;
  /** Aborting stops the read (a body read timeout, or the client gone): the result is `aborted`. */
  signal?: AbortSignal;
  /** see BodyLimits.timeoutMs: a BodyTimeoutError is thrown */
  timeoutMs?: number;
}

export type ReadLimitedResult =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: 'too-large'; limit: number }
  | { ok: false; reason: 'aborted' };

/**
 * Reads `body` whole if it has at most `limit` bytes. A `Content-Length` above the limit should be
 * refused by the caller before calling this; this is the check for what the header does not say. A
 * source that fails past its own limit (a body `limitBody` wrapped) is `too-large` too; its other
 * failures are thrown (BodyTimeoutError, BodyReadError).
 */
export async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  opts: ReadLimitedOptions = {},
): Promise<ReadLimitedResult> {
  if (!body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = new LimitedReader(
    body,
    { maxBytes: limit, drainBytes: opts.drainBytes ?? 0, signal: opts.signal, timeoutMs: opts.timeoutMs },
    true,
  );
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (!chunk) return { ok: true, bytes: concatBytes(chunks, size) };
      size += chunk.byteLength;
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof BodyTooLargeError) return { ok: false, reason: 'too-large', limit };
    if (opts.signal?.aborted) return { ok: false, reason: 'aborted' };
    throw err;
  }
}
