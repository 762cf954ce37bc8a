import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compositeWith, encodeComposite, prepareMembership, type Splicer } from './index.ts';
import { LiveComposite, spliceBytes } from './live.ts';

const clusterName = fc.stringMatching(/^[a-z]([-a-z0-9]{0,6}[a-z0-9])?$/);
/** an entry: unknown, a decimal of any length (lengths change: entries move), or not a decimal at all */
const entry = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 8, arbitrary: fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('007', 'abc', '1a', 'é9', ' 12') },
);
/** an own RV handed to a splicer */
const own = fc.oneof(
  { weight: 6, arbitrary: fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('', '0', '01', 'x', '12a') },
);
const dec = new TextDecoder();

/** the splicer's composite for `o` as the byte path writes it: head, two-digit length, digits, tail */
function byBytes(s: Splicer, o: string): string | undefined {
  const b = spliceBytes(s);
  if (!b || !/^(0|[1-9][0-9]{0,98})$/.test(o)) return undefined;
  return `${dec.decode(b.headBytes)}${o.length < 10 ? '0' : ''}${o.length}${o}${dec.decode(b.tailBytes)}`;
}

describe('LiveComposite: the codec answer, entry changes one at a time', () => {
  it('encodes and splices as encodeComposite and compositeWith for the same entries', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(clusterName, { minLength: 1, maxLength: 8 }),
        fc.array(fc.tuple(fc.nat(), entry, own), { minLength: 1, maxLength: 40 }),
        (names, steps) => {
          const m = prepareMembership(names);
          const rvs = new Map<string, string>();
          const live = new LiveComposite(m, rvs);
          for (const [pick, rv, o] of steps) {
            // a name outside the membership too: the codec ignores its entry
            const all = [...names, 'outside'];
            const c = all[pick % all.length]!;
            rvs.set(c, rv);
            live.set(c, rv);
            expect(live.encode()).toBe(encodeComposite(m, rvs));
            for (const d of all) {
              const want = compositeWith(m, rvs, d);
              const s = live.splicer(d);
              expect(s(o)).toBe(want(o));
              expect(s(rvs.get(d) ?? '')).toBe(want(rvs.get(d) ?? ''));
              const bytes = byBytes(s, o);
              if (bytes !== undefined) expect(bytes).toBe(want(o));
              if (!spliceBytes(s)) {
                expect(s.head).toBe(want.head);
                expect(s.tail).toBe(want.tail);
              } else if (want.head !== undefined && want.tail) {
                // a live splicer's head and tail are its views (no strings: each cost a getter to make)
                const b = spliceBytes(s)!;
                expect(dec.decode(b.headBytes)).toBe(want.head);
                expect(dec.decode(b.tailBytes)).toBe(want.tail);
                expect(s.head).toBeUndefined();
              }
            }
          }
        },
      ),
      { numRuns: 250 },
    );
  });
});
