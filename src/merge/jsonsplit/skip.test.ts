/**
 * The item scanner's fast lane (jsonsplit-skip.ts) against JSON.parse: it accepts exactly what JSON.parse
 * accepts (as a value followed by nothing but whitespace), on random values written loosely and mutated;
 * a valid value cut short is SCAN_MORE, never accepted; and the splitter's resumption of an item that
 * spans chunks (windows of the next chunk) gives the items whole, however the body is cut.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { looseJson, seeded } from '../../../test/helpers/loosejson.ts';
import { ListSplitter, type SplitEvent } from './index.ts';
import { ITEM, ItemScanner } from './item.ts';
import { SCAN_MORE, SCAN_REFUSED, SKIP_STACK, skipValue } from './skip.ts';

/** skipValue's stack, as an item scanner owns one */
const stack = new Uint8Array(SKIP_STACK);

const enc = new TextEncoder();
const dec = new TextDecoder();

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** skipValue over the whole text: accepted when it ends at the text's end (trailing whitespace allowed) */
function skips(b: Uint8Array): number {
  let i = 0;
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++;
  if (i === b.length) return SCAN_MORE;
  return skipValue(b, i, b.length, 100, stack);
}

const mutation = fc.record({
  pos: fc.nat(),
  op: fc.constantFrom('del', 'ins', 'rep'),
  ch: fc.constantFrom(...'{}[]",:\\ 0-+.eE1tfnlu\u0001\t\n'.split(''), 'é', '\u007f'),
});

describe('the fast lane', () => {
  it('accepts exactly what JSON.parse accepts, on loose and mutated JSON', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 5 }),
        fc.integer(),
        fc.array(mutation, { maxLength: 3 }),
        (v, seed, edits) => {
          let text = looseJson(v, seeded(seed), { keyEscapes: 0.2, duplicateKeys: 0.05 });
          for (const { pos, op, ch } of edits) {
            const p = pos % (text.length + 1);
            if (op === 'del') text = text.slice(0, p) + text.slice(p + 1);
            else if (op === 'ins') text = text.slice(0, p) + ch + text.slice(p);
            else text = text.slice(0, p) + ch + text.slice(p + 1);
          }
          // a space after it: a number at the very end of the input could go on (SCAN_MORE)
          const b = enc.encode(`${text} `);
          const end = skips(b);
          let rest = end;
          while (rest >= 0 && rest < b.length && /[ \n\r\t]/.test(String.fromCharCode(b[rest]!))) rest++;
          const whole = end >= 0 && rest === b.length;
          if (whole) accepted++;
          else refused++;
          expect(whole, text).toBe(parses(text));
          // where it stopped early, the value it took is JSON on its own
          if (end >= 0 && !whole) expect(parses(dec.decode(b.subarray(0, end))), text).toBe(true);
        },
      ),
      { numRuns: 6000 },
    );
    expect(accepted).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(500);
  });

  it('says SCAN_MORE for a valid value cut anywhere, and refuses nesting past its room', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.integer(), fc.nat(), (v, seed, cut) => {
        const t = enc.encode(looseJson({ v }, seeded(seed)));
        const n = 1 + (cut % (t.length - 1));
        expect(skipValue(t, 0, n, 100, stack)).toBe(SCAN_MORE);
        expect(skipValue(t, 0, t.length, 100, stack)).toBe(t.length);
      }),
      { numRuns: 1500 },
    );
    const deep = enc.encode(`${'['.repeat(20)}${']'.repeat(20)}`);
    expect(skipValue(deep, 0, deep.length, 20, stack)).toBe(deep.length);
    expect(skipValue(deep, 0, deep.length, 19, stack)).toBe(SCAN_REFUSED);
    // the item scanner hands its room on: an item nested past its limit is left to the automaton
    const item = enc.encode(`{"spec":${'['.repeat(99)}${']'.repeat(99)}}`);
    expect(new ItemScanner().scan(item, 0, item.length, ITEM, 100)).toBe(item.length);
    expect(new ItemScanner().scan(item, 0, item.length, ITEM, 99)).toBe(SCAN_REFUSED);
  });
});

describe('items that span chunks', () => {
  it('are given whole, small and large, whatever the cuts', () => {
    const bigString = fc
      .string({ minLength: 0, maxLength: 40 })
      .map((s) => s.repeat(1 + (s.length % 7) * 300));
    const item = fc.record({
      metadata: fc.record({ name: fc.string({ maxLength: 10 }), resourceVersion: fc.constant('7') }),
      spec: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.array(bigString, { maxLength: 12 })),
    });
    fc.assert(
      fc.property(
        fc.array(item, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.constantFrom(7, 1000, 16 * 1024, 65536),
        (items, cuts, chunk) => {
          const body = enc.encode(
            JSON.stringify({ kind: 'List', items, metadata: { resourceVersion: '1' } }),
          );
          const points = [...new Set([...cuts.map((c) => c % (body.length + 1)), chunk])]
            .filter((p) => p < body.length)
            .sort((a, b) => a - b);
          const s = new ListSplitter();
          const got: SplitEvent[] = [];
          let prev = 0;
          for (const p of [...points, body.length]) {
            s.push(body.slice(prev, p), (e) => got.push(e));
            prev = p;
          }
          s.end();
          const out = got.filter((e) => e.type === 'item').map((e) => JSON.parse(dec.decode(e.bytes)));
          expect(out).toEqual(JSON.parse(dec.decode(body)).items);
          // the facts of an item resumed from a window are the item's own: its name lies where it says
          for (const e of got)
            if (e.type === 'item' && e.facts && !e.facts.odd && e.facts.nameFrom >= 0)
              expect(JSON.parse(dec.decode(e.bytes.subarray(e.facts.nameFrom, e.facts.nameTo)))).toBe(
                JSON.parse(dec.decode(e.bytes)).metadata.name,
              );
        },
      ),
      { numRuns: 400 },
    );
  });

  it('reports a malformed item that spans chunks at its offset, as the automaton does', () => {
    const text = `{"items":[{"a":"${'x'.repeat(30000)}",}]}`;
    const b = enc.encode(text);
    const s = new ListSplitter();
    expect(() => {
      s.push(b.slice(0, 20), () => {});
      s.push(b.slice(20), () => {});
    }).toThrow(new RegExp(`at byte ${text.indexOf(',}') + 1}$`));
  });
});
