/**
 * Reading away what a refused request still sends, before the refusal leaves. Node's server does this
 * itself (a lingering close); workerd closes the connection as soon as the answer is out, and request
 * bytes still unread then make the peer's TCP stack answer with a reset that can discard the answer
 * before the client reads it (an unauthenticated 5 MiB upload got no 401, just a reset). Bounded in bytes
 * and time, and nothing is kept: an endless body costs the deadline, never memory.
 */

export interface Lingering {
  /** the body to hand on (reads pass through) */
  stream: ReadableStream<Uint8Array>;
  /** reads away and drops what is left, if nobody read from `stream`: up to `maxBytes`, for `ms` at most */
  drain(maxBytes: number, ms: number): Promise<void>;
}

export function lingering(src: ReadableStream<Uint8Array>): Lingering {
  const reader = src.getReader();
  let touched = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        touched = true;
        try {
          const r = await reader.read();
          if (r.done) controller.close();
          else controller.enqueue(r.value);
        } catch (err) {
          controller.error(err);
        }
      },
      cancel(reason) {
        touched = true;
        return reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    async drain(maxBytes, ms) {
      if (touched) return;
      touched = true;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), ms);
      });
      let left = maxBytes;
      try {
        while (left > 0) {
          const r = await Promise.race([reader.read(), deadline]);
          if (r === 'late' || r.done) break;
          left -= r.value.byteLength;
        }
      } catch {
        // the client went away: nothing left to read
      } finally {
        if (timer !== undefined) clearTimeout(timer);
        reader.cancel().catch(() => {});
      }
    },
  };
}
