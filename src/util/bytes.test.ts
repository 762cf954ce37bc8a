import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteSink, concatBytes, concatOwned, recyclePiece } from './bytes.ts';

describe('concatBytes', () => {
  it('joins any parts back to back', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 12 }), (parts) => {
        const out = concatBytes(parts);
        expect([...out]).toEqual(parts.flatMap((p) => [...p]));
        // the announced total is accepted when right
        expect([...concatBytes(parts, out.length)]).toEqual([...out]);
      }),
    );
  });

  it('refuses a wrong announced total (a miscounting reader is a bug, not a short body)', () => {
    expect(() => concatBytes([new Uint8Array([1, 2])], 3)).toThrow(RangeError);
  });

  it('gives an empty array for no parts', () => {
    expect(concatBytes([]).length).toBe(0);
  });
});

describe('concatOwned', () => {
  it('always gives a new array of its own, even for one part', () => {
    const part = new Uint8Array([1, 2, 3]);
    const out = concatOwned([part], 3);
    expect(out).not.toBe(part);
    expect(out.buffer).toBeInstanceOf(ArrayBuffer);
    expect([...out]).toEqual([1, 2, 3]);
    expect(() => concatOwned([part], 2)).toThrow(RangeError);
  });
});

describe('ByteSink', () => {
  type Op =
    | { op: 'bytes'; b: number[]; from: number }
    | { op: 'byte'; c: number }
    | { op: 'string'; s: string }
    | { op: 'place'; b: number[] }
    | { op: 'take' };
  const anOp: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      op: fc.constant('bytes' as const),
      b: fc.array(fc.nat(255), { maxLength: 200 }),
      from: fc.nat(10),
    }),
    fc.record({ op: fc.constant('byte' as const), c: fc.nat(255) }),
    fc.record({ op: fc.constant('string' as const), s: fc.string({ unit: 'binary', maxLength: 40 }) }),
    fc.record({ op: fc.constant('place' as const), b: fc.array(fc.nat(255), { maxLength: 90 }) }),
    fc.constant({ op: 'take' as const }),
  );

  it('gives back what was written, piece by piece, and never writes over a piece taken (no aliasing)', () => {
    fc.assert(
      fc.property(fc.array(anOp, { maxLength: 60 }), fc.integer({ min: 1, max: 300 }), (ops, size) => {
        const sink = new ByteSink(size);
        const want: number[][] = [[]];
        const taken: { piece: Uint8Array; copy: number[] }[] = [];
        for (const o of ops) {
          const cur = want[want.length - 1]!;
          if (o.op === 'bytes') {
            const from = Math.min(o.from, o.b.length);
            sink.bytes(Uint8Array.from(o.b), from);
            cur.push(...o.b.slice(from));
          } else if (o.op === 'byte') {
            sink.byte(o.c);
            cur.push(o.c);
          } else if (o.op === 'string') {
            sink.string(o.s);
            cur.push(...new TextEncoder().encode(o.s));
          } else if (o.op === 'place') {
            // a writer placing its bytes itself (itembytes-edits.ts)
            const buf = sink.reserve(o.b.length);
            buf.set(o.b, sink.length);
            sink.advance(o.b.length);
            cur.push(...o.b);
          } else {
            expect(sink.length).toBe(cur.length);
            const piece = sink.take();
            taken.push({ piece, copy: [...piece] });
            want.push([]);
          }
        }
        taken.push({ piece: sink.take(), copy: [] });
        taken[taken.length - 1]!.copy = [...taken[taken.length - 1]!.piece];
        // every piece as written, still, after everything written after it
        expect(taken.map((t) => [...t.piece])).toEqual(want);
        expect(taken.map((t) => t.copy)).toEqual(want);
      }),
    );
  });

  it('makes no buffer until written to (a taken last piece leaves none behind)', () => {
    const sink = new ByteSink(1024);
    expect(sink.length).toBe(0);
    expect(sink.take().length).toBe(0);
    sink.string('ab');
    const piece = sink.take();
    expect([...piece]).toEqual([0x61, 0x62]);
    expect(piece.buffer.byteLength).toBe(1024);
    expect(sink.reserve(0).length).toBe(0);
    expect(sink.free).toBe(1024);
    sink.bytes(new Uint8Array(1000));
    expect(sink.free).toBe(24);
    sink.bytes(new Uint8Array(100));
    // grown (copied): twice as large
    expect(sink.free).toBe(2048 - 1100);
    expect(sink.take().length).toBe(1100);
    expect(sink.free).toBe(1024);
  });

  it('reuses a piece its last reader gave back, once, and never one still read (property)', () => {
    const LARGE = 128 * 1024;
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({
              op: fc.constant('write' as const),
              b: fc.uint8Array({ minLength: 1, maxLength: 300 }),
            }),
            fc.record({ op: fc.constant('take' as const), sink: fc.nat(2) }),
            fc.record({ op: fc.constant('giveBack' as const), which: fc.nat(), twice: fc.boolean() }),
          ),
          { maxLength: 80 },
        ),
        fc.nat(2),
        (ops, extra) => {
          // sinks of two sizes that lend, and one that does not (the watch lines' slab)
          const sinks = [new ByteSink(LARGE), new ByteSink(LARGE + extra * 4096), new ByteSink(64 * 1024)];
          const written: number[][] = sinks.map(() => []);
          let at = 0;
          const live: { piece: Uint8Array; want: number[] }[] = [];
          for (const o of ops) {
            if (o.op === 'write') {
              sinks[at]!.bytes(o.b);
              written[at]!.push(...o.b);
            } else if (o.op === 'take') {
              const piece = sinks[o.sink]!.take();
              live.push({ piece, want: written[o.sink]! });
              written[o.sink] = [];
              at = o.sink;
            } else if (live.length > 0) {
              const [gone] = live.splice(o.which % live.length, 1);
              recyclePiece(gone!.piece);
              if (o.twice) recyclePiece(gone!.piece);
            }
            // what is still read is as written, whatever was written into given-back buffers since
            for (const l of live) expect([...l.piece]).toEqual(l.want);
            // no two live pieces (nor a sink's buffer being written) share a buffer
            const buffers = live.filter((l) => l.piece.length > 0).map((l) => l.piece.buffer);
            for (const s of sinks) if (s.length > 0) buffers.push(s.reserve(0).buffer);
            expect(new Set(buffers).size).toBe(buffers.length);
          }
        },
      ),
    );
  });

  it('lends only whole pieces of large sinks: the slab of 64 KiB, a view, a foreign array are ignored', () => {
    const large = new ByteSink(128 * 1024);
    large.string('a');
    const piece = large.take();
    recyclePiece(piece);
    large.string('b');
    // written into again: the same buffer
    expect(large.reserve(0).buffer).toBe(piece.buffer);
    const small = new ByteSink(64 * 1024);
    small.string('c');
    const slab = small.take();
    recyclePiece(slab);
    small.string('d');
    expect(small.reserve(0).buffer).not.toBe(slab.buffer);
    expect([...slab]).toEqual([0x63]);
    const other = new ByteSink(128 * 1024);
    other.string('ef');
    const p2 = other.take();
    recyclePiece(p2.subarray(1));
    recyclePiece(new Uint8Array(128 * 1024));
    other.string('g');
    expect(other.reserve(0).buffer).not.toBe(p2.buffer);
    expect([...p2]).toEqual([0x65, 0x66]);
  });
});
