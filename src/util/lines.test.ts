import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { joinBytes, joinRuns, LineTooLongError, lines, NotJsonError, ndjson, TickBatch } from './lines.ts';

const enc = new TextEncoder();

/** Runs `chunks` through a transform and collects what comes out (or the error it ended with). */
async function run<T>(t: TransformStream<Uint8Array, T>, chunks: Uint8Array[]) {
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      for (const ch of chunks) c.enqueue(ch);
      c.close();
    },
  });
  const out: T[] = [];
  try {
    for await (const v of source.pipeThrough(t)) out.push(v);
    return { out };
  } catch (error) {
    return { out, error };
  }
}

/** Cuts `bytes` at the given offsets (any order, duplicates allowed). */
function cut(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const points = [...new Set(at.map((a) => a % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const p of points) {
    parts.push(bytes.slice(from, p));
    from = p;
  }
  parts.push(bytes.slice(from));
  return parts;
}

describe('lines', () => {
  it('yields the same lines wherever the chunks are cut, mid-character included', async () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, ''));
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 10 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 20 }),
        async (ls, finalNewline, at) => {
          const text = ls.join('\n') + (finalNewline ? '\n' : '');
          const { out, error } = await run(lines(), cut(enc.encode(text), at));
          expect(error).toBeUndefined();
          expect(out).toEqual(ls.filter((l) => l.trim() !== ''));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('drops a trailing CR and skips blank lines', async () => {
    const { out } = await run(lines(), [enc.encode('a\r\n\r\n  \nb\n')]);
    expect(out).toEqual(['a', 'b']);
  });

  it('errors instead of buffering a line past the limit, split over chunks or not', async () => {
    const one = await run(lines({ maxLineBytes: 4 }), [enc.encode('abcde\n')]);
    expect(one.error).toBeInstanceOf(LineTooLongError);
    const split = await run(lines({ maxLineBytes: 4 }), [
      enc.encode('ab'),
      enc.encode('cd'),
      enc.encode('e'),
    ]);
    expect(split.error).toBeInstanceOf(LineTooLongError);
    const fits = await run(lines({ maxLineBytes: 4 }), [enc.encode('ab'), enc.encode('cd\nx')]);
    expect(fits).toEqual({ out: ['abcd', 'x'] });
  });

  it('is not confused by a caller reusing its chunk buffer', async () => {
    const buf = enc.encode('ab');
    const t = lines();
    const w = t.writable.getWriter();
    const r = t.readable.getReader();
    // a TransformStream applies backpressure until someone reads: read first
    const first = r.read();
    await w.write(buf);
    buf.set(enc.encode('zz'));
    await w.write(enc.encode('c\n'));
    expect((await first).value).toBe('abc');
  });
});

describe('ndjson', () => {
  it('parses one value per line across any cuts', async () => {
    const events = fc.array(fc.record({ type: fc.constantFrom('ADDED', 'DELETED'), n: fc.integer() }), {
      maxLength: 8,
    });
    await fc.assert(
      fc.asyncProperty(events, fc.array(fc.nat(), { maxLength: 10 }), async (evs, at) => {
        const text = evs.map((e) => `${JSON.stringify(e)}\n`).join('');
        const { out, error } = await run(ndjson(), cut(enc.encode(text), at));
        expect(error).toBeUndefined();
        expect(out).toEqual(evs);
      }),
      { numRuns: 300 },
    );
  });

  it('errors with NotJsonError on a line that is not JSON, after what came before', async () => {
    const { out, error } = await run(ndjson(), [enc.encode('{"a":1}\n<html>\n{"b":2}\n')]);
    expect(out).toEqual([{ a: 1 }]);
    expect(error).toBeInstanceOf(NotJsonError);
  });
});

describe('TickBatch', () => {
  it('hands on the pieces of one tick as one chunk at its end, in order; flush hands on at once', async () => {
    const out: string[] = [];
    const dec = new TextDecoder();
    const b = new TickBatch((c) => out.push(dec.decode(c)));
    b.add(enc.encode('a\n'));
    b.add(enc.encode('b\n'));
    expect(out).toEqual([]);
    await Promise.resolve();
    expect(out).toEqual(['a\nb\n']);
    b.add(enc.encode('c\n'));
    b.flush();
    await Promise.resolve();
    expect(out).toEqual(['a\nb\n', 'c\n']);
  });

  it('joins pieces back to back in one buffer without a copy, and copies any others', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(5), { minLength: 1, maxLength: 6 }), fc.boolean(), (lens, gap) => {
        const buf = Uint8Array.from({ length: 64 }, (_, i) => i);
        const parts: Uint8Array[] = [];
        let at = 0;
        for (const [k, n] of lens.entries()) {
          if (gap && k === 1) at++;
          parts.push(buf.subarray(at, at + n));
          at += n;
        }
        const n = parts.reduce((s, p) => s + p.length, 0);
        const joined = joinBytes(parts, n);
        expect([...joined]).toEqual(parts.flatMap((p) => [...p]));
        if (!gap || lens.length < 2) expect(joined.buffer).toBe(buf.buffer);
      }),
    );
  });

  it('hands on runs of pieces in one buffer as views, copying only short runs, bytes in order (property)', () => {
    // pieces from a few buffers, as a merged watch's slabs and its lines encoded one by one give them
    const bufs = Array.from({ length: 4 }, (_, k) =>
      Uint8Array.from({ length: 200_000 }, (_, i) => (i * 7 + k) & 0xff),
    );
    const piece = fc.record({ buffer: fc.nat(3), len: fc.integer({ min: 0, max: 6000 }), gap: fc.boolean() });
    fc.assert(
      fc.property(fc.array(piece, { minLength: 2, maxLength: 30 }), (specs) => {
        const at = [0, 0, 0, 0];
        const parts = specs.map((p) => {
          if (p.gap) at[p.buffer]! += 1;
          const v = bufs[p.buffer]!.subarray(at[p.buffer]!, at[p.buffer]! + p.len);
          at[p.buffer]! += p.len;
          return v;
        });
        const out = joinRuns(parts);
        expect(out.flatMap((c) => [...c])).toEqual(parts.flatMap((p) => [...p]));
        // what is copied is at most the runs (pieces back to back) under 8 KiB
        let shortBytes = 0;
        let run = 0;
        parts.forEach((p, k) => {
          const q = parts[k - 1];
          if (k > 0 && !(q!.buffer === p.buffer && q!.byteOffset + q!.length === p.byteOffset)) {
            if (run < 8192) shortBytes += run;
            run = 0;
          }
          run += p.length;
        });
        if (run < 8192) shortBytes += run;
        const copied = out.filter((c) => !bufs.some((b) => b.buffer === c.buffer));
        expect(copied.reduce((n, c) => n + c.length, 0)).toBeLessThanOrEqual(shortBytes);
      }),
      { numRuns: 200 },
    );
  });
});
