/**
 * The wasm lane of Edits.write (./wasm.ts, skip.wat's apply) against Edits.write, its oracle: the same
 * bytes for random and adversarial items and edits (escapes, unicode, edits at the item's first and last
 * byte, next to each other, empty texts, sub-ranges), the item in the memory (the array scanned) or not
 * (copied in), items larger than the memory, more texts than its room holds, and an item whose array was
 * replaced in the memory after it was scanned.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteSink } from '../../util/bytes.ts';
import { ItemScanner, ROW } from '../jsonsplit/item.ts';
import { WasmSkip, wasmLane, wasmScannerModule } from '../jsonsplit/wasm/lane.ts';
import { Edits } from './edits.ts';
import { WasmEdits, wasmEdits } from './wasm.ts';

const enc = new TextEncoder();
const module = wasmScannerModule();

/** constant texts, made once as a view's are (the lane finds them again by identity) */
const CONSTANTS = ['', ',"c1"', '.clusterspace.c1', '"fleet.karmada.io/cluster":"é€😀"', 'x'.repeat(300)].map(
  (s) => enc.encode(s),
);
const weird = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.constantFrom('', '"', '\\', '\u0000\u001f', '\ud800', 'é', '😀', 'a\nb', '<none>'),
);
type Plan = { kind: 'const'; i: number } | { kind: 'json'; s: string } | { kind: 'spliced'; head: string };
const plan: fc.Arbitrary<Plan> = fc.oneof(
  fc.record({ kind: fc.constant('const' as const), i: fc.nat(CONSTANTS.length - 1) }),
  fc.record({ kind: fc.constant('json' as const), s: weird }),
  fc.record({ kind: fc.constant('spliced' as const), head: fc.stringMatching(/^[0-9]{0,30}$/) }),
);
/** an item (any bytes, JSON-ish or not: the writers do not read them) and edits on it */
const item = fc
  .tuple(
    fc.oneof(
      fc.uint8Array({ maxLength: 900 }),
      weird.map((s) => enc.encode(JSON.stringify({ name: s, cells: [s, 1, null] }))),
    ),
    fc.array(fc.tuple(fc.nat(), fc.nat(6), plan), { maxLength: 12 }),
    fc.nat(),
    fc.nat(),
  )
  .map(([b, cuts, x, y]) => {
    const [p, q] = [x % (b.length + 1), y % (b.length + 1)];
    return { b, cuts, sub: [Math.min(p, q), Math.max(p, q)] as const };
  });

/** the edits of `cuts` inside b[from..to): sorted, not overlapping, some empty, some touching */
function editsOf(b: Uint8Array, cuts: Array<[number, number, Plan]>, from: number, to: number): Edits {
  const e = new Edits();
  const span = to - from;
  const starts = cuts.map(([at, len, p]) => [from + (span ? at % (span + 1) : 0), len, p] as const);
  starts.sort((p, q) => p[0] - q[0]);
  let last = from;
  for (const [at0, len, p] of starts) {
    const at = Math.max(at0, last);
    const end = Math.min(to, at + len);
    if (p.kind === 'const') e.put(at, end, CONSTANTS[p.i]!);
    else if (p.kind === 'json') e.putJson(at, end, p.s);
    else e.putSpliced(at, end, enc.encode(p.head), b, at, Math.min(end, at + 9), enc.encode('7'));
    last = end;
  }
  return e;
}

/** Edits.write's bytes and the lane's (the lane declining: none) */
function both(lane: WasmEdits, e: Edits, b: Uint8Array, from: number, to: number) {
  const js = new ByteSink(16);
  js.string('<');
  e.write(js, b, from, to);
  const w = new ByteSink(16);
  w.string('<');
  const ok = lane.write(e, w, b, from, to);
  return { js: Buffer.from(js.take()), wasm: ok ? Buffer.from(w.take()) : undefined };
}

describe('the wasm lane of Edits.write', () => {
  it('is there: the tests run with the scanner module (test/helpers/scanner-lane.ts)', () => {
    expect(module).toBeDefined();
    expect(wasmEdits()).toBeDefined();
  });

  it('writes the bytes Edits.write writes, the item in the memory or copied in', () => {
    const skip = new WasmSkip(module!);
    const lane = new WasmEdits(skip);
    let inMemory = 0;
    fc.assert(
      fc.property(item, fc.boolean(), ({ b, cuts, sub }, load) => {
        // the item's array scanned (loaded) or not: `at` finds it there or the lane copies it in
        if (load) skip.skip(b, 0, b.length, 100);
        else skip.forget();
        if (skip.at(b) >= 0) inMemory++;
        for (const [from, to] of [[0, b.length], sub] as const) {
          const e = editsOf(b, cuts, from, to);
          let { js, wasm } = both(lane, e, b, from, to);
          // a fresh edit list places its texts again: when the room is full the lane declines one item,
          // forgets them all, and takes the next
          if (wasm === undefined) ({ js, wasm } = both(lane, e, b, from, to));
          expect(wasm).toBeDefined();
          expect(wasm!.equals(js)).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
    expect(inMemory).toBeGreaterThan(1000);
  });

  it('writes items larger than the memory, which it grows, and those in a view of a larger array', () => {
    const skip = new WasmSkip(module!);
    const lane = new WasmEdits(skip);
    const big = new Uint8Array(3 << 20);
    for (let k = 0; k < big.length; k++) big[k] = 0x20 + (k % 90);
    for (const b of [big, big.subarray(5, 300_001), big.subarray(big.length - 70_000)]) {
      for (const load of [false, true]) {
        if (load) skip.skip(b, 0, b.length, 100);
        else skip.forget();
        const e = new Edits();
        e.put(0, 0, CONSTANTS[3]!);
        e.put(1, 70, CONSTANTS[0]!);
        e.putJson(70, 70, 'é"x');
        e.put(b.length >> 1, (b.length >> 1) + 1, CONSTANTS[4]!);
        e.put(b.length - 1, b.length, CONSTANTS[1]!);
        const { js, wasm } = both(lane, e, b, 0, b.length);
        expect(wasm!.equals(js)).toBe(true);
      }
    }
  });

  it('declines a row whose texts outgrow its room, and takes the next after it placed them again', () => {
    const lane = new WasmEdits(new WasmSkip(module!));
    const b = enc.encode('{"cells":["a","b"]}');
    let declined = 0;
    for (let round = 0; round < 300; round++) {
      const e = new Edits();
      // fresh constants every row: the room fills
      for (let k = 0; k < 4; k++) e.put(k, k, enc.encode(`${'t'.repeat(50)}${round}.${k}`));
      const { js, wasm } = both(lane, e, b, 0, b.length);
      if (wasm === undefined) declined++;
      else expect(wasm.equals(js)).toBe(true);
    }
    expect(declined).toBeGreaterThan(0);
    expect(lane.written).toBeGreaterThan(250);
  });

  it('declines edits out of order, which it cannot trust, without reading outside the item', () => {
    const lane = new WasmEdits(new WasmSkip(module!));
    const b = enc.encode('{"a":1}');
    const e = new Edits();
    e.put(1, 3, CONSTANTS[1]!);
    e.put(1, 1, CONSTANTS[2]!);
    expect(lane.write(e, new ByteSink(16), b, 0, b.length)).toBe(false);
    expect(lane.declined).toBe(1);
  });

  it("copies in a row whose array another replaced in the memory since it was scanned (its facts' stamp)", () => {
    const scanner = new ItemScanner(undefined, undefined, module!);
    const lane = new WasmEdits(wasmLane(module)!);
    const row = enc.encode('{"cells":["web-1","Running"],"object":{"metadata":{"name":"web-1"}}}');
    expect(scanner.scan(row, 0, row.length, ROW, 100)).toBe(row.length);
    const f = scanner.facts;
    expect(f.laneAt(row.length, wasmLane(module)!.loads)).toBeGreaterThan(0);
    const e = new Edits();
    e.put(15, 16, CONSTANTS[1]!);
    const want = both(lane, e, row, 0, row.length).js;
    // another array of the same length scanned over it
    const other = enc.encode('{"cells":["xxx-9","Pending"],"object":{"metadata":{"name":"xxx-9"}}}');
    expect(scanner.scan(other, 0, other.length, ROW, 100)).toBe(other.length);
    const sink = new ByteSink(16);
    sink.string('<');
    expect(lane.write(e, sink, row, 0, row.length, f)).toBe(true);
    expect(Buffer.from(sink.take()).equals(want)).toBe(true);
  });
});
