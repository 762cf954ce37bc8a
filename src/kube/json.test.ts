import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesNestDeeperThan, MAX_BODY_DEPTH, nestsDeeperThan } from './json.ts';

/** `depth` levels of alternating objects and arrays around a scalar. */
function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, not scalars', () => {
    expect(nestsDeeperThan('x', 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: null }] }, 2)).toBe(true);
    expect(nestsDeeperThan({ a: [1, { b: null }] }, 3)).toBe(false);
  });

  it('finds the exact limit for any depth and limit', () => {
    fc.assert(
      fc.property(fc.nat(200), fc.nat(200), (depth, limit) => {
        expect(nestsDeeperThan(nested(depth), limit)).toBe(depth > limit);
      }),
    );
  });

  it('looks at every branch, not just the first', () => {
    expect(nestsDeeperThan({ shallow: 1, items: [1, 2, nested(MAX_BODY_DEPTH)] })).toBe(true);
    expect(nestsDeeperThan({ shallow: 1, items: [1, 2, nested(MAX_BODY_DEPTH - 2)] })).toBe(false);
  });

  it('does not overflow the stack on what JSON.stringify cannot serialise', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(nestsDeeperThan(deep)).toBe(true);
  });

  it('keeps the limit where re-serialising is safe', () => {
    expect(() => JSON.stringify(nested(MAX_BODY_DEPTH))).not.toThrow();
  });
});

describe('bytesNestDeeperThan', () => {
  const enc = (v: string) => new TextEncoder().encode(v);
  it('agrees with nestsDeeperThan on the parsed value, for any depth and limit', () => {
    fc.assert(
      fc.property(fc.nat(200), fc.nat(200), (depth, limit) => {
        expect(bytesNestDeeperThan(enc(JSON.stringify(nested(depth))), limit)).toBe(depth > limit);
      }),
    );
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(6), (v, limit) => {
        expect(bytesNestDeeperThan(enc(JSON.stringify(v)), limit)).toBe(nestsDeeperThan(v, limit));
      }),
    );
  });

  it('skips brackets inside strings, escaped quotes included', () => {
    expect(bytesNestDeeperThan(enc(`{"a":"[[[[\\"[[[["}`), 1)).toBe(false);
    expect(bytesNestDeeperThan(enc(`{"a":"\\\\",  "b":[[]]}`), 2)).toBe(true);
  });

  it('refuses 5,000 nested arrays', () => {
    expect(bytesNestDeeperThan(enc(`{"x":${'['.repeat(5000)}${']'.repeat(5000)}}`))).toBe(true);
  });
});
