import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BodyReadError, BodyTimeoutError, BodyTooLargeError, limitBody, readLimited } from './body.ts';

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

/** A body of the given chunks that records how much was pulled and whether it was cancelled. */
function chunked(chunks: Uint8Array[], endless = false) {
  const seen = { pulled: 0, cancelled: false };
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      const ch = chunks[i++] ?? (endless ? new Uint8Array(10) : undefined);
      if (!ch) return c.close();
      seen.pulled += ch.length;
      c.enqueue(ch);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

describe('readLimited', () => {
  it('reads a body within the limit whole, in any chunking', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 50 }), { maxLength: 10 }), async (chunks) => {
        const total = chunks.reduce((n, c) => n + c.length, 0);
        const r = await readLimited(chunked(chunks).stream, total);
        expect(r.ok).toBe(true);
        if (r.ok) expect([...r.bytes]).toEqual(chunks.flatMap((c) => [...c]));
        if (total > 0) expect((await readLimited(chunked(chunks).stream, total - 1)).ok).toBe(false);
      }),
    );
  });

  it('stops an endless chunked body at the limit instead of buffering it', async () => {
    const { stream, seen } = chunked([], true);
    const r = await readLimited(stream, 100);
    expect(r).toEqual({ ok: false, reason: 'too-large', limit: 100 });
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(130); // the limit plus a little read-ahead
  });

  it('reads away a bounded amount past the limit, then cancels', async () => {
    const { stream, seen } = chunked([], true);
    await readLimited(stream, 100, { drainBytes: 300 });
    expect(seen.pulled).toBeGreaterThanOrEqual(400);
    expect(seen.pulled).toBeLessThanOrEqual(450);
    expect(seen.cancelled).toBe(true);
  });

  it('does not cancel an oversized body that ended while draining', async () => {
    const { stream, seen } = chunked([new Uint8Array(150), new Uint8Array(10)]);
    const r = await readLimited(stream, 100, { drainBytes: 1_000 });
    expect(r.ok).toBe(false);
    expect(seen.cancelled).toBe(false);
  });

  it('gives up on a body that stalls when the signal fires', async () => {
    const stalled = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new Uint8Array(5)) });
    const ac = new AbortController();
    const p = readLimited(stalled, 100, { signal: ac.signal });
    ac.abort(new Error('body read timeout'));
    expect(await p).toEqual({ ok: false, reason: 'aborted' });
  });

  it('treats no body as empty', async () => {
    const r = await readLimited(null, 0);
    expect(r.ok && r.bytes.length).toBe(0);
  });
});

describe('one reader for both', () => {
  it('a source limitBody already refuses is too-large for readLimited too', async () => {
    const s = source(0, 1000, { endless: true });
    const r = await readLimited(limitBody(s.stream, { maxBytes: 2048, timeoutMs: 5_000 }), 1 << 20);
    expect(r).toEqual({ ok: false, reason: 'too-large', limit: 1 << 20 });
  });

  it('a source that breaks mid-body is a BodyReadError, read whole or streamed', async () => {
    const broken = () =>
      new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new Uint8Array(5));
        },
        pull(c) {
          c.error(new TypeError('terminated'));
        },
      });
    await expect(readLimited(broken(), 100)).rejects.toBeInstanceOf(BodyReadError);
    await expect(readAll(limitBody(broken(), { maxBytes: 100, timeoutMs: 5_000 }))).rejects.toBeInstanceOf(
      BodyReadError,
    );
  });

  it('the deadline also ends a drain under way (a slow client past the limit holds nothing)', async () => {
    let cancelled = false;
    const slow = new ReadableStream<Uint8Array>({
      async pull(c) {
        await new Promise((r) => setTimeout(r, 20));
        c.enqueue(new Uint8Array(50));
      },
      cancel() {
        cancelled = true;
      },
    });
    const t0 = Date.now();
    // past the limit on the third chunk, then a drain of 1 MB at 2.5 KB/s: the 300 ms deadline ends it
    const r = await readLimited(slow, 100, { drainBytes: 1 << 20, timeoutMs: 300 });
    expect(r).toEqual({ ok: false, reason: 'too-large', limit: 100 });
    expect(cancelled).toBe(true);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('a signal that fires mid-drain ends it: the answer is still too-large', async () => {
    const ac = new AbortController();
    let reads = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        if (++reads === 20) ac.abort(new Error('deadline'));
        c.enqueue(new Uint8Array(10));
      },
    });
    const r = await readLimited(endless, 100, { drainBytes: 1 << 30, signal: ac.signal });
    expect(r).toEqual({ ok: false, reason: 'too-large', limit: 100 });
    expect(reads).toBeLessThan(40);
  });
});
