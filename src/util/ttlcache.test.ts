import { describe, expect, it } from 'vitest';
import { TtlCache } from './ttlcache.ts';

function clock(start = 1_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('TtlCache', () => {
  it('serves an entry until its TTL has passed, then forgets it', () => {
    const c = clock();
    const cache = new TtlCache<string>(100, 10, c.now);
    cache.set('k', 'v');
    c.advance(99);
    expect(cache.get('k')).toBe('v');
    c.advance(1);
    expect(cache.get('k')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('never keeps an entry past its own expiry, and drops one already expired', () => {
    const c = clock();
    const cache = new TtlCache<number>(1_000, 10, c.now);
    cache.set('short', 1, c.now() + 10);
    cache.set('gone', 2, c.now());
    c.advance(10);
    expect(cache.get('short')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('evicts the entry written longest ago when full; a rewrite counts as new', () => {
    const cache = new TtlCache<number>(1_000, 2, clock().now);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 3);
    cache.set('c', 4);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(3);
    expect(cache.get('c')).toBe(4);
  });

  it('keeps nothing when its TTL is 0', () => {
    const cache = new TtlCache<number>(0, 2);
    cache.set('a', 1);
    expect(cache.enabled).toBe(false);
    expect(cache.get('a')).toBeUndefined();
  });
});
