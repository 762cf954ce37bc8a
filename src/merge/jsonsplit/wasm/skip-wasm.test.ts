/**
 * The WebAssembly lane (skip.wat) against the JavaScript one (../skip.ts, its oracle): the same answer
 * (end, SCAN_MORE, SCAN_REFUSED) on random and adversarial bytes, cut at every position, at every room;
 * and the committed skip.wasm is what skip.wat assembles to (a stale binary fails here).
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { assemble } from '../../../../scripts/build-wasm.mjs';
import { looseJson, seeded } from '../../../../test/helpers/loosejson.ts';
import { KEYS } from '../facts.ts';
import { ITEM, ItemScanner, ROW } from '../item.ts';
import { SCAN_MORE, SKIP_STACK, skipValue } from '../skip.ts';
import { skipLane, TAPE_ENTRY, TAPE_FULL, WasmSkip, wasmScannerModule } from './lane.ts';

const enc = new TextEncoder();
const wat = readFileSync(new URL('./skip.wat', import.meta.url), 'utf8');
const committed = new Uint8Array(readFileSync(new URL('./skip.wasm', import.meta.url)));
const stack = new Uint8Array(SKIP_STACK);
let wasm: WasmSkip;

beforeAll(() => {
  wasm = new WasmSkip(new WebAssembly.Module(committed));
});

/** both lanes on b from i to n at room: the same answer (returned), from the wasm lane's skip and its tape */
function agree(b: Uint8Array, i: number, n: number, room: number): number {
  const js = skipValue(b, i, n, room, stack);
  const w = wasm.skip(b, i, n, room);
  const t = wasm.tape(b, i, n, room);
  if (w !== js || t !== js) {
    const text = JSON.stringify(new TextDecoder().decode(b.subarray(i, n)));
    expect.fail(`at ${i}..${n} room ${room}: wasm ${w}, tape ${t}, js ${js}: ${text.slice(0, 300)}`);
  }
  return js;
}

/** both lanes on every prefix of b (from its first byte), and on the whole at rooms 0..depth+1 */
function agreeEverywhere(b: Uint8Array, rooms = [100]): void {
  for (let n = 1; n <= b.length; n++) for (const room of rooms) agree(b, 0, n, room);
}

const MARK = 'fleet.karmada.io/cluster';
const strOrAny = fc.oneof(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }));
const map = fc.dictionary(
  fc.constantFrom('app', MARK, 'tier', 'k', 'kubectl.kubernetes.io/last-applied-configuration'),
  strOrAny,
  {
    maxKeys: 4,
  },
);
const owner = fc.record(
  { apiVersion: fc.constant('apps/v1'), kind: fc.string({ maxLength: 4 }), name: strOrAny, uid: fc.string() },
  { requiredKeys: ['kind'] },
);
/** items whose members are the ones the facts note (./facts.ts), anywhere they may be, and others */
const k8sItem = fc.record({
  item: fc.record(
    {
      kind: strOrAny,
      metadata: fc.oneof(
        fc.record(
          {
            name: strOrAny,
            namespace: strOrAny,
            uid: fc.string(),
            resourceVersion: strOrAny,
            labels: fc.oneof(map, strOrAny),
            annotations: map,
            ownerReferences: fc.oneof(fc.array(fc.oneof(owner, strOrAny), { maxLength: 3 }), strOrAny),
            managedFields: fc.jsonValue({ maxDepth: 3 }),
          },
          { requiredKeys: [] },
        ),
        strOrAny,
      ),
      spec: fc.record(
        {
          containers: fc.jsonValue({ maxDepth: 3 }),
          nodeName: strOrAny,
          volumeName: strOrAny,
          template: fc.jsonValue({ maxDepth: 2 }),
          selector: fc.oneof(
            fc.record({ matchLabels: fc.oneof(map, strOrAny) }, { requiredKeys: [] }),
            strOrAny,
          ),
          metadata: fc.record({ labels: map }),
        },
        { requiredKeys: [] },
      ),
      status: fc.record(
        { nominatedNodeName: strOrAny, phase: strOrAny, conditions: fc.jsonValue({ maxDepth: 3 }) },
        { requiredKeys: [] },
      ),
      target: fc.jsonValue({ maxDepth: 1 }),
      object: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
  cells: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 10 }), strOrAny),
});

/** a byte string of JSON-ish atoms: what makes both lanes' branches meet */
const atom = fc.constantFrom(
  ...['{', '}', '[', ']', '"', ',', ':', ' ', '\n', '\t', '\r', '\\', '\\u', '\\u00e9', '\\uZZ12', '\\u12G4'],
  ...[
    '\\n',
    '\\"',
    '\\x',
    '\\b',
    '\\f',
    '\\r',
    '\\t',
    '\\/',
    '\\\\',
    '0',
    '-',
    '1.5',
    'e',
    'E+',
    '.',
    '01',
    'true',
    'tru',
    'null',
    'nul',
    'false',
    'fals',
  ],
  ...['\u0001', '\u001f', '\u007f', 'é', '€', '😀', 'abc', 'x'.repeat(15), 'y'.repeat(16), 'z'.repeat(17)],
);

describe('the wasm lane of skipValue', () => {
  it('is what skip.wat assembles to (run `node scripts/build-wasm.mjs` after editing it)', async () => {
    expect(Buffer.from(await assemble('skip.wat', wat)).equals(committed)).toBe(true);
  });

  it('agrees with the JavaScript lane on loose JSON, cut at every position', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer(), (v, seed) => {
        const text = looseJson(v, seeded(seed), { keyEscapes: 0.3, duplicateKeys: 0.05 });
        const b = enc.encode(`${text} `);
        if (b[0]! <= 0x20) return;
        agreeEverywhere(b);
      }),
      { numRuns: 400 },
    );
  });

  it('agrees on JSON-ish atoms in any order (escapes, bad \\u, control characters, multibyte UTF-8)', () => {
    fc.assert(
      fc.property(fc.array(atom, { minLength: 1, maxLength: 40 }), fc.nat(12), (parts, room) => {
        const b = enc.encode(parts.join(''));
        if (b[0]! <= 0x20) return;
        agreeEverywhere(b, [room, 100]);
      }),
      { numRuns: 3000 },
    );
  });

  it('agrees on random bytes from any start, up to any end', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 80 }), fc.nat(), (b, at) => {
        const i = at % b.length;
        if (b[i]! <= 0x20) return;
        for (let n = i + 1; n <= b.length; n++) agree(b, i, n, 100);
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees on strings ending on and across 16-byte boundaries, and exactly at n', () => {
    for (let len = 0; len <= 50; len++)
      for (const stop of ['"', '\\"', '\\u0041"', '\\uX041"', '\u0001', '\\'])
        for (const lead of ['', ' ', '  [ ', '{"k":']) {
          const b = enc.encode(`${lead.trimStart()}"${'a'.repeat(len)}${stop}`);
          for (let n = 1; n <= b.length; n++) agree(b, 0, n, 100);
          // the same bytes further into a larger array (the copy's offset, bytes past n that are not the value's)
          const wide = enc.encode(`${' '.repeat(len % 17)}${new TextDecoder().decode(b)}]]]"""`);
          agree(wide, len % 17, (len % 17) + b.length, 100);
        }
    for (let ws = 0; ws <= 40; ws++)
      agreeEverywhere(enc.encode(`[${' \n\t\r'.repeat(ws).slice(0, ws)}1${' '.repeat(ws)}]`));
  });

  it("agrees on strings whose stops lie on and across the tape's 64-byte blocks, in containers looked into or not", () => {
    // the tape finds a string's stops in a mask of the 64 bytes from where a string began (here the first
    // one): a next string that begins on the block's last bytes, its first past, stops there, and the
    // bytes past n (which the lanes must not read as the value's)
    const stops = ['"', '\\"', '\\\\"', '\\u0041"', '\\uX041"', '\u0001', '\\', 'é"'];
    // the value itself, in objects and arrays the tape looks into, in ones it skips
    const wraps: Array<[string, string]> = [
      ['', ''],
      ['{"metadata":{"name":', '}}'],
      ['{"cells":', ',"object":{}}'],
      ['{"spec":{"containers":[', ']}}'],
      ['{"metadata":{"labels":{"k":"v","x":', '}}}'],
    ];
    for (const [open, close] of wraps)
      for (const len of [0, 1, 46, 47, 48, 62, 63, 64, 65, 66, 110, 126, 127, 128, 129, 200])
        for (const stop of stops)
          for (const lead of [0, 1, 15, 17, 58, 59, 60, 61, 62, 63, 64, 65]) {
            const before = `"${'p'.repeat(lead)}",`;
            const text = `${open}[${before}"${'a'.repeat(len)}${stop}${'b'.repeat(len % 5)}"]${close}`;
            const b = enc.encode(`${text}"""\\`);
            const n = b.length - 4;
            agree(b, 0, n, 100);
            for (let m = n - 1; m > 0; m -= 7) agree(b, 0, m, 100);
            for (
              let m = Math.max(1, open.length + before.length + len - 3);
              m < n && m < open.length + before.length + len + 12;
              m++
            )
              agree(b, 0, m, 100);
          }
  });

  it('agrees on every byte after a backslash, and every byte in a \\u escape', () => {
    for (let c = 0; c < 256; c++) {
      for (const pad of ['', 'x'.repeat(14), 'x'.repeat(20)]) {
        const b = new Uint8Array([...enc.encode(`["${pad}\\`), c, ...enc.encode('a"] ')]);
        agreeEverywhere(b);
        for (let at = 0; at < 4; at++) {
          const hex = enc.encode(`{"${pad}\\u0a1F":1} `);
          hex[pad.length + 4 + at] = c;
          agreeEverywhere(hex);
        }
      }
    }
  });

  it('agrees at and over the nesting limit, at every room', () => {
    for (const depth of [1, 2, 20, 129, 130, 131, 140]) {
      for (const [open, close] of [
        ['[', ']'],
        ['{"a":', '}'],
      ]) {
        const b = enc.encode(open!.repeat(depth) + '0' + close!.repeat(depth));
        for (const room of [0, 1, depth - 1, depth, depth + 1, 200]) agree(b, 0, b.length, room);
        agreeEverywhere(b, [depth]);
      }
    }
  });

  it('copies per array: a second array with other bytes is read as it is', () => {
    const a = enc.encode('{"a":"b"}');
    const b = enc.encode('{"a":1x}');
    expect(wasm.skip(a, 0, a.length, 10)).toBe(a.length);
    expect(wasm.skip(b, 0, b.length, 10)).toBe(skipValue(b, 0, b.length, 10, stack));
    // an array larger than the instance's memory grows it
    const big = enc.encode(`["${'x'.repeat(300_000)}",1]`);
    expect(wasm.skip(big, 0, big.length, 10)).toBe(big.length);
  });

  it('scans in JavaScript an array its memory cannot grow to hold', () => {
    const lane = new WasmSkip(new WebAssembly.Module(committed));
    const memory = (lane as unknown as { memory: WebAssembly.Memory }).memory;
    // as a runtime at its limit refuses
    Object.defineProperty(memory, 'grow', {
      value: () => {
        throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
      },
    });
    const big = enc.encode(`["${'x'.repeat(300_000)}",1] `);
    expect(lane.skip(big, 0, big.length, 10)).toBe(big.length - 1);
    expect(lane.skip(big, 0, big.length - 3, 10)).toBe(SCAN_MORE);
    expect(lane.copied).toBe(0);
    const small = enc.encode('{"a":[1,2]}');
    expect(lane.skip(small, 0, small.length, 10)).toBe(small.length);
    expect(lane.copied).toBe(small.length);
  });

  it('is the lane the tests run unless FLEET_SCANNER_WASM=off (test/helpers/scanner-lane.ts)', () => {
    expect(wasmScannerModule() !== undefined).toBe(process.env.FLEET_SCANNER_WASM !== 'off');
  });

  it('gives an item scanner the same ends and facts in either lane', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.jsonValue({ maxDepth: 4 }), (spec, status) => {
        const item = { metadata: { name: 'a', namespace: 'n', resourceVersion: '7' }, spec, status };
        const b = enc.encode(`${JSON.stringify(item)},`);
        const w = new ItemScanner(undefined, undefined, new WebAssembly.Module(committed));
        const j = new ItemScanner(undefined, undefined, null);
        expect(w.lane).toBeDefined();
        for (let n = 1; n <= b.length; n += 7) {
          const end = j.scan(b, 0, n, ITEM, 100);
          expect(w.scan(b, 0, n, ITEM, 100)).toBe(end);
          // facts are read on an end only (a scan given up leaves its partial ones in JavaScript)
          if (end >= 0) expect(w.facts).toEqual(j.facts);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reads from the tape the facts the JavaScript scan notes: Kubernetes-shaped items and rows, written loosely, cut, in chunks', () => {
    const w = new ItemScanner(undefined, undefined, new WebAssembly.Module(committed));
    const j = new ItemScanner(undefined, undefined, null);
    let ends = 0;
    fc.assert(
      fc.property(
        k8sItem,
        fc.boolean(),
        fc.integer(),
        fc.nat(),
        fc.integer({ min: 1, max: 12 }),
        (v, row, seed, cut, room) => {
          const rnd = seeded(seed);
          const value = row ? { cells: v.cells, object: v.item } : v.item;
          const text = looseJson(value, rnd, { keyEscapes: 0.05, duplicateKeys: 0.08 });
          // the item among others in its chunk, as a list body gives it
          const b = enc.encode(`[{"x":1}, ${text} ,2]`);
          const i = b.indexOf(0x7b, 2);
          const ctx = row ? ROW : ITEM;
          for (const [n, depth] of [
            [b.length, 100],
            [b.length, room],
            [i + 1 + (cut % (b.length - i)), 100],
          ] as const) {
            const end = j.scan(b, i, n, ctx, depth);
            expect(w.scan(b, i, n, ctx, depth), text).toBe(end);
            if (end >= 0) {
              ends++;
              expect(w.facts, text).toEqual(j.facts);
            }
          }
        },
      ),
      { numRuns: 600 },
    );
    expect(ends).toBeGreaterThan(600);
  });

  it('reads from the tape what makes an item odd, and the facts given twice or in odd places', () => {
    const w = new ItemScanner(undefined, undefined, new WebAssembly.Module(committed));
    const j = new ItemScanner(undefined, undefined, null);
    const texts = [
      '{"metadata":{"ownerReferences":[{"name":"a","name":"b"},{"name":"c"}]}}',
      '{"metadata":{"ownerReferences":[{"name":"a"},["name"],"x",{"kind":"k","name":{"n":1}}]}}',
      '{"metadata":{"name":"a","name":"b","labels":{"fleet.karmada.io/cluster":"c1","x":"y"}}}',
      '{"meta\\u0064ata":{"name":"a"},"spec":{"nodeName":"n","containers":[]}}',
      '{"metadata":{"na\\u006de":"a","labels":{"a\\"b":"c"}}}',
      '{"metadata":"m","spec":[{"nodeName":"n"}],"status":{"nominatedNodeName":"x"}}',
      '{"kind":"Binding","target":{"name":"n"},"metadata":{"annotations":{"fleet.karmada.io/cluster":"c"}}}',
      '{"spec":{"selector":{"matchLabels":{"fleet.karmada.io/cluster":"c","app":"a"}},"template":{"metadata":{}}}}',
      '{"cells":["a",1,{"x":[1]},null],"cells":[true],"object":{"metadata":{"name":"r"}}}',
      '{"cells":[],"object":{"kind":"Pod","metadata":{"uid":"u","namespace":"ns"}}}',
      '{ "cells" : [ "a" , 2 ] , "object" : { "metadata" : { "name" : "r" , "labels" : { } } } }',
      '{"metadata":{"labels":[{"fleet.karmada.io/cluster":"c"}],"annotations":{}}}',
      // the watch's shape reads the last top-level apiVersion from the facts (watch/bytes.ts)
      '{"apiVersion":"v1","kind":"Pod","api\\u0056ersion":"apps/v1","metadata":{"apiVersion":"x"}}',
      '{"apiVersion":1,"spec":{"apiVersion":"a"},"apiVersion":"b/v1"}',
    ];
    for (const text of texts) {
      const b = enc.encode(text);
      for (const ctx of [ITEM, ROW]) {
        const end = j.scan(b, 0, b.length, ctx, 100);
        expect(end, text).toBe(b.length);
        expect(w.scan(b, 0, b.length, ctx, 100), text).toBe(end);
        expect(w.facts, text).toEqual(j.facts);
      }
    }
    const row = enc.encode('{"cells":["a",2],"object":{}}');
    expect(w.scan(row, 0, row.length, ROW, 100)).toBe(row.length);
    expect(w.facts.cells).toEqual([10, 13, 14, 15]);
  });

  it("names each key the facts know by its id, and no other key (the lane's key table)", () => {
    const lane = new WasmSkip(new WebAssembly.Module(committed));
    const dec = new TextDecoder();
    const names = KEYS.map((k) => dec.decode(k));
    // each known key, then ones that differ from it in their last byte, first byte, length
    const keys = names.flatMap((k) => [k, `${k.slice(0, -1)}~`, `~${k.slice(1)}`, `${k}s`, k.slice(0, -1)]);
    const b = enc.encode(`{${keys.map((k, v) => `"${k}":${v}`).join(',')}}`);
    expect(lane.tape(b, 0, b.length, 10)).toBe(b.length);
    const t = lane.words;
    const ids = keys.map((_, k) => t[lane.tapeBase + (k + 1) * TAPE_ENTRY + 1]);
    expect(ids).toEqual(keys.map((k) => names.indexOf(k) + 1));
    expect(ids.filter((id) => id! > 0).length).toBe(names.length);
  });

  it('scans in JavaScript an item with more members than the tape holds, with the same facts', () => {
    const labels = Object.fromEntries(Array.from({ length: 5000 }, (_, k) => [`l${k}`, `v${k}`]));
    const item = { metadata: { name: 'big', labels, resourceVersion: '3' }, spec: { nodeName: 'n' } };
    const b = enc.encode(JSON.stringify(item));
    const w = new ItemScanner(undefined, undefined, new WebAssembly.Module(committed));
    const j = new ItemScanner(undefined, undefined, null);
    expect(w.lane?.tape(b, 0, b.length, 100)).toBe(TAPE_FULL);
    expect(w.scan(b, 0, b.length, ITEM, 100)).toBe(b.length);
    expect(j.scan(b, 0, b.length, ITEM, 100)).toBe(b.length);
    expect(w.facts).toEqual(j.facts);
    expect(w.facts.labelsKeys).toBe(5000);
  });

  it('falls back to the JavaScript lane when no module is given', () => {
    const skip = skipLane(new Uint8Array(SKIP_STACK), undefined);
    const b = enc.encode('[1,{"a":[]}] ');
    expect(skip(b, 0, b.length, 10)).toBe(12);
  });
});
