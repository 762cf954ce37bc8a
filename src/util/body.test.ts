import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readLimited } from './body.ts';

/** A body of the given chunks that records how much was pulled and whether it was cancelled. */
function body(chunks: Uint8Array[], endless = false) {
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
        const r = await readLimited(body(chunks).stream, total);
        expect(r.ok).toBe(true);
        if (r.ok) expect([...r.bytes]).toEqual(chunks.flatMap((c) => [...c]));
        if (total > 0) expect((await readLimited(body(chunks).stream, total - 1)).ok).toBe(false);
      }),
    );
  });

  it('stops an endless chunked body at the limit instead of buffering it', async () => {
    const { stream, seen } = body([], true);
    const r = await readLimited(stream, 100);
    expect(r).toEqual({ ok: false, reason: 'too-large', limit: 100 });
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(130); // the limit plus a little read-ahead
  });

  it('reads away a bounded amount past the limit, then cancels', async () => {
    const { stream, seen } = body([], true);
    await readLimited(stream, 100, { drainBytes: 300 });
    expect(seen.pulled).toBeGreaterThanOrEqual(400);
    expect(seen.pulled).toBeLessThanOrEqual(450);
    expect(seen.cancelled).toBe(true);
  });

  it('does not cancel an oversized body that ended while draining', async () => {
    const { stream, seen } = body([new Uint8Array(150), new Uint8Array(10)]);
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
