import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes, concatOwned } from './bytes.ts';

describe('concatBytes', () => {
  it('joins any parts back to back', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 12 }), (parts) => {
        const out = concatBytes(parts);
        expect([...out]).toEqual(parts.flatMap((p) => [...p]));
        // the announced total is accepted when right
        expect([...concatBytes(parts, out.length)]).toEqual([...out]);
      }),
    );
  });

  it('refuses a wrong announced total (a miscounting reader is a bug, not a short body)', () => {
    expect(() => concatBytes([new Uint8Array([1, 2])], 3)).toThrow(RangeError);
  });

  it('gives an empty array for no parts', () => {
    expect(concatBytes([]).length).toBe(0);
  });
});

describe('concatOwned', () => {
  it('always gives a new array of its own, even for one part', () => {
    const part = new Uint8Array([1, 2, 3]);
    const out = concatOwned([part], 3);
    expect(out).not.toBe(part);
    expect(out.buffer).toBeInstanceOf(ArrayBuffer);
    expect([...out]).toEqual([1, 2, 3]);
    expect(() => concatOwned([part], 2)).toThrow(RangeError);
  });
});
