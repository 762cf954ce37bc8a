/**
 * The SHA-256 behind shortened names (names-hash.ts) is written out, so it is checked here against the
 * standard's own numbers and against node:crypto, and the name digests against answers @noble/hashes gave
 * before it replaced that dependency (a shortened name must decode the same after an upgrade).
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { H0, K, nameDigest, sha256 } from './names-hash.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const ascii = (s: string) => new TextEncoder().encode(s);

describe('sha256', () => {
  it('has the constants of FIPS 180-4 §4.2.2 and §5.3.3', () => {
    const k =
      '428a2f98 71374491 b5c0fbcf e9b5dba5 3956c25b 59f111f1 923f82a4 ab1c5ed5 d807aa98 12835b01 243185be 550c7dc3 72be5d74 80deb1fe 9bdc06a7 c19bf174 e49b69c1 efbe4786 0fc19dc6 240ca1cc 2de92c6f 4a7484aa 5cb0a9dc 76f988da 983e5152 a831c66d b00327c8 bf597fc7 c6e00bf3 d5a79147 06ca6351 14292967 27b70a85 2e1b2138 4d2c6dfc 53380d13 650a7354 766a0abb 81c2c92e 92722c85 a2bfe8a1 a81a664b c24b8b70 c76c51a3 d192e819 d6990624 f40e3585 106aa070 19a4c116 1e376c08 2748774c 34b0bcb5 391c0cb3 4ed8aa4a 5b9cca4f 682e6ff3 748f82ee 78a5636f 84c87814 8cc70208 90befffa a4506ceb bef9a3f7 c67178f2';
    expect(Array.from(K, (x) => x.toString(16).padStart(8, '0')).join(' ')).toBe(k);
    expect(H0.map((x) => x.toString(16).padStart(8, '0')).join(' ')).toBe(
      '6a09e667 bb67ae85 3c6ef372 a54ff53a 510e527f 9b05688c 1f83d9ab 5be0cd19',
    );
  });

  it('gives the FIPS 180-2 appendix B examples', () => {
    expect(hex(sha256(ascii('abc')))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(hex(sha256(ascii('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
    expect(hex(sha256(ascii('a'.repeat(1_000_000))))).toBe(
      'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0',
    );
    expect(hex(sha256(new Uint8Array(0)))).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });

  it('equals node:crypto for every length over the padding edges of several blocks', () => {
    for (let n = 0; n <= 1100; n++) {
      const data = randomBytes(n);
      expect(hex(sha256(data)), `length ${n}`).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });

  it('does not change its input', () => {
    const data = randomBytes(100);
    const copy = Buffer.from(data);
    sha256(data);
    expect(Buffer.compare(data, copy)).toBe(0);
  });
});

describe('nameDigest', () => {
  it('gives the answers it gave with @noble/hashes', () => {
    expect(nameDigest('')).toBe('3gng7kheu33tg');
    expect(nameDigest('abc')).toBe('2u31avf0fasx6');
    expect(nameDigest('a'.repeat(300))).toBe('2bbut0gr6468r');
    expect(nameDigest('héllo-wörld.example')).toBe('0hl5nh0r46k47');
    expect(nameDigest('x'.repeat(55))).toBe('393czt0tv7vsw');
    expect(nameDigest('y'.repeat(64))).toBe('3w0eenhodv2gc');
  });
});
