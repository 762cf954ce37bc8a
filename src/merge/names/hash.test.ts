/**
 * The digest behind shortened names (names-hash.ts): a shortened name must decode the same after any
 * change of how the digest is computed, so its answers are pinned (recorded with @noble/hashes, which
 * computed it before node:crypto did), and the name's bytes are what TextEncoder gives (as they were).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { NAME_DIGEST_LENGTH, nameDigest } from './hash.ts';

describe('nameDigest', () => {
  it('gives the answers it gave with @noble/hashes', () => {
    expect(nameDigest('')).toBe('3gng7kheu33tg');
    expect(nameDigest('abc')).toBe('2u31avf0fasx6');
    expect(nameDigest('a'.repeat(300))).toBe('2bbut0gr6468r');
    expect(nameDigest('héllo-wörld.example')).toBe('0hl5nh0r46k47');
    expect(nameDigest('x'.repeat(55))).toBe('393czt0tv7vsw');
    expect(nameDigest('y'.repeat(64))).toBe('3w0eenhodv2gc');
  });

  it('hashes the UTF-8 TextEncoder gives, lone surrogates included, always 13 base-36 characters', () => {
    const enc = new TextEncoder();
    for (const name of ['\ud800', 'a\udfffb', '😀'.repeat(40), 'z'.repeat(1000), '\u0000']) {
      const d = createHash('sha256').update(enc.encode(name)).digest();
      const want = BigInt(`0x${d.subarray(0, 8).toString('hex')}`)
        .toString(36)
        .padStart(13, '0');
      expect(nameDigest(name)).toBe(want);
      expect(nameDigest(name)).toMatch(new RegExp(`^[0-9a-z]{${NAME_DIGEST_LENGTH}}$`));
    }
  });
});
