import { describe, expect, it } from 'vitest';
import { utf8Short } from './utf8.ts';

const enc = new TextEncoder();

describe('utf8Short', () => {
  it('gives the bytes TextEncoder gives: ASCII, empty, non-ASCII, lone surrogates, long texts', () => {
    for (const s of ['', '"m1.123', 'a'.repeat(64), 'a'.repeat(65), 'é', 'x\u{1F600}y', '\ud800', 'rv-ü-1'])
      expect(utf8Short(s)).toEqual(enc.encode(s));
  });
});
