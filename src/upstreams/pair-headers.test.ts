import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { headerPairs } from '../request/headers.ts';
import { combineLines, PairHeaders } from './pair-headers.ts';

const NAMES = [
  'Accept',
  'accept',
  'Cookie',
  'cookie',
  'Set-Cookie',
  'set-cookie',
  'X-A',
  'x-b',
  'Authorization',
  'a',
  'z',
  'Content-Type',
];
const line = fc.tuple(fc.constantFrom(...NAMES), fc.stringMatching(/^[ \t]{0,2}[!-~ ]{0,8}[ \t]{0,2}$/));

function native(lines: string[]): Headers {
  const h = new Headers();
  for (let i = 0; i < lines.length; i += 2) h.append(lines[i]!, lines[i + 1]!);
  return h;
}

describe('PairHeaders', () => {
  it('reads as a Headers built from the same lines (random lines: repeats, cookies, case, whitespace)', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 10 }), (ls) => {
        const lines = ls.flat();
        const want = native(lines);
        const got = new PairHeaders(lines) as unknown as Headers;
        expect([...got]).toEqual([...want]);
        expect(combineLines(lines)).toEqual(headerPairs(want));
        const seen: Array<[string, string]> = [];
        got.forEach((v, k, parent) => {
          seen.push([k, v]);
          expect(parent).toBe(got);
        });
        expect(seen).toEqual([...want]);
        for (const n of [...NAMES, 'missing'])
          expect([got.get(n), got.has(n)]).toEqual([want.get(n), want.has(n)]);
        expect(got.getSetCookie()).toEqual(want.getSetCookie());
        // copied as entries (Headers from an iterable re-trims each combined value, whoever iterates)
        expect([...new Headers(got)]).toEqual([...new Headers([...want])]);
        expect([...got.keys()]).toEqual([...want.keys()]);
        expect([...got.values()]).toEqual([...want.values()]);
      }),
      { numRuns: 500 },
    );
  });

  it('becomes a real Headers on the first change and reads as one after it', () => {
    const got = new PairHeaders(['B', '2', 'a', '1']) as unknown as Headers;
    const want = native(['B', '2', 'a', '1']);
    for (const h of [got, want]) {
      h.set('c', '3');
      h.append('a', '4');
      h.delete('b');
    }
    expect([...got]).toEqual([...want]);
    expect(headerPairs(got)).toEqual(headerPairs(want));
    expect(got instanceof Headers).toBe(true);
  });

  it('refuses an invalid name as Headers does', () => {
    expect(() => (new PairHeaders([]) as unknown as Headers).get('bad name')).toThrow(TypeError);
  });
});
