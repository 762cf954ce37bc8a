import { describe, expect, it } from 'vitest';
import { assertReach, relayGroups, TooManyClustersError } from './plan.ts';

const relay = async () => new Response();
const names = (n: number) => Array.from({ length: n }, (_, i) => `c${i + 1}`);

describe('relayGroups', () => {
  it('asks 1,000 clusters through 167 relays of at most 6, all from the first invocation (one level)', () => {
    const groups = relayGroups(
      { maxConnectionsPerRequest: 6, relay, maxClustersPerRequest: 1000 },
      names(1000),
    );
    expect(groups).toHaveLength(167);
    expect(groups!.every((g) => g.length <= 6)).toBe(true);
    expect(groups!.flat()).toEqual(names(1000));
  });

  it('refuses a fan-out wider than maxClustersPerRequest before any group is made, relay or not', () => {
    expect(() =>
      relayGroups({ maxConnectionsPerRequest: 6, relay, maxClustersPerRequest: 7 }, names(8)),
    ).toThrow(TooManyClustersError);
    expect(() => relayGroups({ maxConnectionsPerRequest: 100, maxClustersPerRequest: 7 }, names(8))).toThrow(
      /spans 8 clusters.*at most 7.*maxClustersPerRequest/,
    );
    expect(
      relayGroups({ maxConnectionsPerRequest: 6, relay, maxClustersPerRequest: 8 }, names(8)),
    ).toHaveLength(2);
    expect(() => assertReach({}, 1_000_000)).not.toThrow();
  });
});
