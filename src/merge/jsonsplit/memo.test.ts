/**
 * The item scanner's memo of validated values (jsonsplit-memo.ts): an item scanned with values it kept
 * from items before gives what a scan without the memo gives (its end or refusal, and its facts), for
 * items that repeat those values, change them slightly, cut them short or break them, and nesting rooms
 * that differ from the one a value was kept with.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { looseJson, seeded } from '../../../test/helpers/loosejson.ts';
import { ITEM, ItemScanner } from './item.ts';

const enc = new TextEncoder();
const compare = Buffer.prototype.compare as (this: Uint8Array, t: Uint8Array, s: number, e: number) => number;
const native = (m: Uint8Array, b: Uint8Array, at: number) => compare.call(m, b, at, at + m.length) === 0;

function scan(s: ItemScanner, b: Uint8Array, n: number, depth: number) {
  const end = s.scan(b, 0, n, ITEM, depth);
  return { end, facts: { ...s.facts } };
}

const big = fc
  .array(fc.jsonValue({ maxDepth: 3 }), { minLength: 4, maxLength: 12 })
  .filter((v) => JSON.stringify(v).length >= 140);

const mutation = fc.record({
  pos: fc.nat(),
  op: fc.constantFrom('del', 'ins', 'rep'),
  ch: fc.constantFrom(...'{}[]",:\\ 0-+.1tfn\u0001'.split(''), 'é'),
});

describe('the memo of validated values', () => {
  it('changes no scan: repeated, altered, cut and broken items, other rooms', () => {
    let hits = 0;
    fc.assert(
      fc.property(
        big,
        big,
        fc.integer(),
        fc.array(mutation, { maxLength: 2 }),
        fc.nat(),
        fc.integer({ min: 3, max: 12 }),
        (v, w, seed, edits, cut, depth) => {
          const rnd = seeded(seed);
          const item = (c: unknown) =>
            looseJson(
              {
                kind: 'Pod',
                metadata: { name: 'web', managedFields: c },
                spec: { containers: c, volumes: w, nodeName: 'n1' },
                status: { conditions: [c, w] },
              },
              rnd,
              { keyEscapes: 0.02 },
            );
          let text = item(v);
          // the memo primed with items of the same values, written alike (the item before its mutations)
          // or not
          const primers = [enc.encode(item(v)), enc.encode(text)];
          const prime = () => {
            // the JavaScript scan (the memo is its; the wasm lane's tape path keeps none)
            const s = new ItemScanner(native, undefined, null);
            // kept with the room of the scan to come, or more (where it must not count)
            for (const [k, p] of primers.entries()) s.scan(p, 0, p.length, ITEM, k ? depth : 100);
            return s;
          };
          for (const { pos, op, ch } of edits) {
            const p = pos % (text.length + 1);
            if (op === 'del') text = text.slice(0, p) + text.slice(p + 1);
            else if (op === 'ins') text = text.slice(0, p) + ch + text.slice(p);
            else text = text.slice(0, p) + ch + text.slice(p + 1);
          }
          const b = enc.encode(text);
          for (const n of [b.length, cut % (b.length + 1)]) {
            const primed = prime();
            const before = primed.memo.hits;
            const withMemo = scan(primed, b, n, depth);
            if (primed.memo.hits > before) hits++;
            expect(withMemo, text).toEqual(scan(new ItemScanner(undefined, undefined, null), b, n, depth));
          }
        },
      ),
      { numRuns: 1500 },
    );
    expect(hits).toBeGreaterThan(200);
  });
});
