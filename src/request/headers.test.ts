import { describe, expect, it } from 'vitest';
import { headerPairs, headersOf, trimValue } from './headers.ts';

describe('header entries', () => {
  it('are a Headers’ own entries, and make the same Headers again', () => {
    const h = new Headers([
      ['B', ' 2 '],
      ['a', '1'],
      ['a', '3'],
      ['Set-Cookie', 'x=1'],
      ['set-cookie', 'y=2'],
    ]);
    const p = headerPairs(h);
    expect(p).toEqual(['a', '1, 3', 'b', '2', 'set-cookie', 'x=1', 'set-cookie', 'y=2']);
    expect([...headersOf(p)]).toEqual([...h]);
  });

  it('trim HTTP whitespace at both ends only, as Headers does', () => {
    for (const v of ['', 'a', ' a', 'a\t', '\r\n a b \t', ' \t ', 'a\u00a0'])
      expect(trimValue(v)).toBe(new Headers([['x', v]]).get('x'));
  });
});
