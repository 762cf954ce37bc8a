/**
 * Request bodies as the fleet reads them: never more than the limit, never for longer than the deadline,
 * whatever the framing (Content-Length or chunked). Runtime-neutral (Web streams only).
 */

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
  /** the whole body must arrive within this long after the first read */
  timeoutMs: number;
}

/**
 * Reads and discards what a client still sends after its body was refused (bounded), so that it is
 * still reading when the refusal comes instead of seeing a reset connection; then lets go of the source.
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
 * `src` limited while it is read: pulled only as the consumer reads (backpressure, nothing buffered
 * here), failing with BodyTooLargeError past `maxBytes` and with BodyTimeoutError when the body is not
 * complete `timeoutMs` after the first read. The deadline starts on first read, so a body nobody reads
 * (a request refused before its body matters) holds no timer.
 */
export function limitBody(src: ReadableStream<Uint8Array>, limits: BodyLimits): ReadableStream<Uint8Array> {
  const reader = src.getReader();
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let settled = false;
  const settle = () => {
    settled = true;
    if (timer !== undefined) clearTimeout(timer);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        timer ??= setTimeout(() => {
          if (settled) return;
          settle();
          controller.error(new BodyTimeoutError(limits.timeoutMs));
          void reader.cancel().catch(() => {});
        }, limits.timeoutMs);
        let r: ReadableStreamReadResult<Uint8Array>;
        try {
          r = await reader.read();
        } catch (err) {
          if (!settled) {
            settle();
            // an abort stays an abort (the client left); anything else is a body that could not be read
            controller.error((err as Error)?.name === 'AbortError' ? err : new BodyReadError(err));
          }
          return;
        }
        if (settled) return;
        if (r.done) {
          settle();
          controller.close();
          return;
        }
        size += r.value.byteLength;
        if (limits.maxBytes !== undefined && size > limits.maxBytes) {
          settle();
          controller.error(new BodyTooLargeError(limits.maxBytes));
          void drain(reader, 4 * limits.maxBytes);
          return;
        }
        controller.enqueue(r.value);
      },
      cancel(reason) {
        settle();
        return reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}
