import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { base64Decode, base64Encode, base64urlDecode, base64urlEncode } from './base64.ts';

describe('base64url', () => {
  it('round-trips any bytes, without padding or the standard alphabet', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const s = base64urlEncode(bytes);
        expect(s).toMatch(/^[A-Za-z0-9_-]*$/);
        expect([...base64urlDecode(s)!]).toEqual([...bytes]);
      }),
    );
  });

  it('has one spelling per byte string: other spellings are refused', () => {
    expect(base64urlDecode('AA')).toEqual(new Uint8Array([0]));
    expect(base64urlDecode('AB')).toBeUndefined(); // non-zero trailing bits
    expect(base64urlDecode('AA==')).toBeUndefined(); // padding
    expect(base64urlDecode('A A')).toBeUndefined(); // whitespace, which atob would skip
    expect(base64urlDecode('+/')).toBeUndefined(); // standard alphabet
    expect(base64urlDecode('A')).toBeUndefined(); // impossible length
    expect(base64urlDecode('é')).toBeUndefined();
    let decodedSome = 0;
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (s) => {
        const out = base64urlDecode(s);
        if (out === undefined) return;
        decodedSome++;
        expect(base64urlEncode(out)).toBe(s);
      }),
      { numRuns: 2000 },
    );
    // the property above is only worth something if some random strings decoded
    expect(decodedSome).toBeGreaterThan(0);
  });

  it('encodes strings as UTF-8', () => {
    expect(base64urlEncode('é')).toBe('w6k');
  });
});

describe('base64', () => {
  it('round-trips any bytes, large ones included', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100_000 }), (bytes) => {
        expect([...base64Decode(base64Encode(bytes))]).toEqual([...bytes]);
      }),
      { numRuns: 30 },
    );
  });

  it('matches the standard alphabet with padding, and accepts wrapped text', () => {
    expect(base64Encode('shop')).toBe('c2hvcA==');
    expect(new TextDecoder().decode(base64Decode('c2hv\n  cA=='))).toBe('shop');
  });

  it('throws a TypeError for what is not base64', () => {
    expect(() => base64Decode('not base64!')).toThrow(TypeError);
  });
});
