import { describe, expect, it } from 'vitest';
import { BodyTimeoutError, BodyTooLargeError, limitBody } from './body.ts';

function source(chunks: number, size: number, opts: { endless?: boolean } = {}) {
  let sent = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (opts.endless || sent < chunks) {
        sent++;
        c.enqueue(new Uint8Array(size));
      } else c.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, sent: () => sent, cancelled: () => cancelled };
}

async function readAll(s: ReadableStream<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const ch of s as unknown as AsyncIterable<Uint8Array>) n += ch.byteLength;
  return n;
}

describe('limitBody', () => {
  it('passes a body within the limit through unchanged', async () => {
    const s = source(4, 256);
    expect(await readAll(limitBody(s.stream, { maxBytes: 1024, timeoutMs: 5_000 }))).toBe(1024);
  });

  it('fails past the limit while reading, reads away a bounded rest, then lets go of the source', async () => {
    const s = source(0, 1000, { endless: true });
    await expect(readAll(limitBody(s.stream, { maxBytes: 2048, timeoutMs: 5_000 }))).rejects.toBeInstanceOf(
      BodyTooLargeError,
    );
    // read away up to 4× the limit in the background, then the endless source is cancelled
    await expect.poll(() => s.cancelled()).toBe(true);
    expect(s.sent()).toBeLessThanOrEqual(3 + Math.ceil((4 * 2048) / 1000) + 2);
  });

  it('without a limit (a declared Content-Length), only the deadline applies', async () => {
    const s = source(10, 1000);
    expect(await readAll(limitBody(s.stream, { timeoutMs: 5_000 }))).toBe(10_000);
  });

  it('fails with BodyTimeoutError when the body does not complete in time after the first read', async () => {
    let cancelled = false;
    const stalled = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(10));
      },
      cancel() {
        cancelled = true;
      },
    });
    const t0 = Date.now();
    await expect(readAll(limitBody(stalled, { maxBytes: 1024, timeoutMs: 200 }))).rejects.toBeInstanceOf(
      BodyTimeoutError,
    );
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect(cancelled).toBe(true);
  });

  it('arms no timer for a body nobody reads', async () => {
    let cancelled = false;
    const s = new ReadableStream<Uint8Array>({
      cancel() {
        cancelled = true;
      },
    });
    const limited = limitBody(s, { maxBytes: 10, timeoutMs: 20 });
    await new Promise((r) => setTimeout(r, 80));
    expect(cancelled).toBe(false);
    await limited.cancel();
    expect(cancelled).toBe(true);
  });
});
