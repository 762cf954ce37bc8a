import { describe, expect, it } from 'vitest';
import { Coalescer, SharedCallLostError, SlowReaderError } from './coalesce.ts';

const KiB = 1024;

/** An upstream answer of `chunks` chunks of `size` bytes (byte value = chunk index), read on demand. */
function upstream(chunks: number, size: number) {
  const seen: { signal?: AbortSignal; pulls: number; starts: number } = { pulls: 0, starts: 0 };
  const start = async (signal: AbortSignal) => {
    seen.starts++;
    seen.signal = signal;
    let i = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(c) {
          seen.pulls++;
          if (i === chunks) return c.close();
          c.enqueue(new Uint8Array(size).fill(i++ % 256));
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { start, seen };
}

function coalescer(over: Partial<ConstructorParameters<typeof Coalescer>[0]> = {}) {
  return new Coalescer({ lagBytes: 128 * KiB, keepBytes: 1024 * KiB, budgetBytes: 4096 * KiB, ...over });
}

async function bytes(res: Response): Promise<number[]> {
  return [...new Uint8Array(await res.arrayBuffer())];
}

describe('Coalescer', () => {
  it('identical concurrent reads share one upstream call and each gets the whole answer', async () => {
    const co = coalescer();
    const up = upstream(4, 10);
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => co.join('k', up.start)));
    expect(up.seen.starts).toBe(1);
    expect([a!.joined, b!.joined, c!.joined]).toEqual([false, true, true]);
    const bodies = await Promise.all([a!, b!, c!].map((x) => bytes(x.res)));
    for (const body of bodies) expect(body).toEqual([...Array(40)].map((_, i) => Math.floor(i / 10)));
    expect(b!.res.headers.get('content-type')).toBe('application/json');
    expect(co.inflight).toBe(0);
  });

  it('different keys never share', async () => {
    const co = coalescer();
    const up = upstream(1, 1);
    await Promise.all([co.join('alice', up.start), co.join('bob', up.start)]);
    expect(up.seen.starts).toBe(2);
  });

  it('an asker that goes away does not cancel the call for the others; the last one leaving does', async () => {
    const co = coalescer();
    const up = upstream(8, 100);
    const first = new AbortController();
    const a = await co.join('k', up.start, first.signal);
    const b = await co.join('k', up.start);
    const ra = a.res.body!.getReader();
    await ra.read();
    first.abort(new Error('client went away'));
    await expect(ra.read()).rejects.toThrow('client went away');
    expect(up.seen.signal!.aborted).toBe(false);
    expect((await bytes(b.res)).length).toBe(800);

    // everyone leaving: the upstream request is aborted
    const up2 = upstream(8, 100);
    const c = await co.join('k2', up2.start);
    const d = await co.join('k2', up2.start);
    await c.res.body!.cancel();
    expect(up2.seen.signal!.aborted).toBe(false);
    await d.res.body!.cancel();
    expect(up2.seen.signal!.aborted).toBe(true);
    expect(co.inflight).toBe(0);
  });

  it('an asker that leaves while the head is awaited leaves alone', async () => {
    const co = coalescer();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const up = upstream(2, 5);
    const slowStart = async (s: AbortSignal) => {
      await gate;
      return up.start(s);
    };
    const ac = new AbortController();
    const a = co.join('k', slowStart, ac.signal);
    const b = co.join('k', slowStart);
    ac.abort(new Error('gone'));
    await expect(a).rejects.toThrow('gone');
    release();
    expect((await bytes((await b).res)).length).toBe(10);
  });

  it('a slow reader is detached once it falls lagBytes behind, and never holds the others up', async () => {
    const detached: number[] = [];
    const co = coalescer({ lagBytes: 128 * KiB, keepBytes: 0, onDetached: () => detached.push(1) });
    const up = upstream(32, 64 * KiB); // 2 MiB in all
    const joins = await Promise.all([0, 1, 2].map(() => co.join('k', up.start)));
    const [fast1, fast2, slow] = joins.map((j) => j.res);
    const slowReader = slow!.body!.getReader();
    await slowReader.read(); // reads one chunk, then stops reading
    // the fast readers finish although the slow one reads nothing more
    const [x, y] = await Promise.all([fast1!.arrayBuffer(), fast2!.arrayBuffer()]);
    expect(x.byteLength).toBe(2 * 1024 * KiB);
    expect(new Uint8Array(y)[31 * 64 * KiB]).toBe(31);
    expect(Buffer.compare(new Uint8Array(x), new Uint8Array(y))).toBe(0);
    expect(detached).toEqual([1]);
    await expect(
      (async () => {
        for (;;) if ((await slowReader.read()).done) return;
      })(),
    ).rejects.toBeInstanceOf(SlowReaderError);
    // the upstream was read at the fast readers' pace, once: no chunk read twice
    expect(up.seen.pulls).toBe(33);
  });

  it('memory: chunks every reader has taken are released once the body is too big to keep whole', async () => {
    const co = coalescer({ lagBytes: 1024 * KiB, keepBytes: 128 * KiB });
    const up = upstream(16, 64 * KiB);
    const a = await co.join('k', up.start);
    const r = a.res.body!.getReader();
    await r.read();
    await r.read();
    // still whole (128 KiB): a newcomer joins from byte 0
    const b = await co.join('k', up.start);
    expect(b.joined).toBe(true);
    await r.read();
    expect(co.kept).toBe(0); // past keepBytes: nothing kept whole any more
    const c = await co.join('k', up.start);
    expect(c.joined).toBe(false); // cannot join from byte 0: a call of its own
    expect(up.seen.starts).toBe(2);
    const all = await Promise.all([
      b.res.arrayBuffer().then((x) => x.byteLength),
      c.res.arrayBuffer().then((x) => x.byteLength),
      (async () => {
        let n = 3 * 64 * KiB;
        for (;;) {
          const x = await r.read();
          if (x.done) return n;
          n += x.value.length;
        }
      })(),
    ]);
    expect(all[0]).toBe(1024 * KiB);
    expect(all[1]).toBe(1024 * KiB);
    expect(all[2]).toBe(1024 * KiB);
  });

  it('the whole body is handed to onComplete before the readers see its end; a failure reaches every reader', async () => {
    const co = coalescer();
    const up = upstream(3, 4);
    const stored: number[] = [];
    const a = await co.join('k', up.start, undefined, (head, body) => {
      expect(head.status).toBe(200);
      stored.push(body.reduce((n, b) => n + b.length, 0));
    });
    expect((await bytes(a.res)).length).toBe(12);
    expect(stored).toEqual([12]);

    const failing = async () => {
      throw new Error('unreachable');
    };
    const r = await Promise.allSettled([co.join('f', failing), co.join('f', failing)]);
    expect(r.map((x) => x.status)).toEqual(['rejected', 'rejected']);
    expect(co.inflight).toBe(0);
  });

  it('an answer still whole is read on to its end for the store when its last reader stops early', async () => {
    const co = coalescer();
    const up = upstream(5, 10);
    let stored = 0;
    const done = new Promise<void>((resolve) => {
      void co
        .join('k', up.start, undefined, (_h, body) => {
          stored = body.reduce((n, b) => n + b.length, 0);
          resolve();
        })
        .then(async ({ res }) => {
          const r = res.body!.getReader();
          await r.read();
          await r.cancel(); // a list reader stops at the closing bracket
        });
    });
    await done;
    expect(stored).toBe(50);
    expect(up.seen.signal!.aborted).toBe(false);
  });

  it('owner-bound (Workers): the starter stopping early keeps the call; the starter going away fails the rest fast', async () => {
    const co = coalescer({ ownerBound: true, stallMs: 60_000 });
    const up = upstream(4, 10);
    let stored = 0;
    const a = await co.join('k', up.start, undefined, (_h, b) => {
      stored = b.length;
    });
    const b = await co.join('k', up.start);
    const ra = a.res.body!.getReader();
    await ra.read();
    await ra.cancel(); // a list reader at its closing bracket: its request lives on
    expect((await bytes(b.res)).length).toBe(40);
    expect(stored).toBe(4);

    const up2 = upstream(4, 10);
    const gone = new AbortController();
    const c = await co.join('k2', up2.start, gone.signal);
    const d = await co.join('k2', up2.start);
    const rd = d.res.body!.getReader();
    await rd.read();
    gone.abort(new Error('client went away'));
    await expect(
      (async () => {
        for (;;) if ((await rd.read()).done) return;
      })(),
    ).rejects.toBeInstanceOf(SharedCallLostError);
    await c.res.body?.cancel().catch(() => {});
  });

  it('a body that breaks mid-way: a reader that had not caught up gets the bytes read before the error', async () => {
    const co = coalescer();
    let sent = 0;
    const start = async () =>
      new Response(
        new ReadableStream(
          {
            pull(c) {
              if (sent++ < 2) c.enqueue(new Uint8Array(10).fill(sent));
              else c.error(new Error('cut'));
            },
          },
          { highWaterMark: 0 },
        ),
      );
    const [a, b] = await Promise.all([co.join('k', start), co.join('k', start)]);
    // a drives the call to the break; b has read nothing yet
    await expect(a.res.text()).rejects.toThrow('cut');
    const rb = b.res.body!.getReader();
    const got: number[] = [];
    let failed: unknown;
    try {
      for (;;) {
        const { done, value } = await rb.read();
        if (done) break;
        got.push(...value);
      }
    } catch (err) {
      failed = err;
    }
    // the bytes the cluster did send (so the reader can tell its body began and broke, and read it
    // again from there), then the same error: never a clean end
    expect(got).toEqual([...Array(10).fill(1), ...Array(10).fill(2)]);
    expect((failed as Error)?.message).toBe('cut');
  });

  it('a body that breaks fails every reader', async () => {
    const co = coalescer();
    const start = async () =>
      new Response(
        new ReadableStream({
          pull(c) {
            c.error(new Error('cut'));
          },
        }),
      );
    const [a, b] = await Promise.all([co.join('k', start), co.join('k', start)]);
    await expect(a.res.text()).rejects.toThrow('cut');
    await expect(b.res.text()).rejects.toThrow('cut');
  });
});
