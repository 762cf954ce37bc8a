import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { continueErrorStatus, decodeContinue, encodeContinue } from './continue.ts';
import { prepareMembership } from './rv/index.ts';

const clusterName = fc.stringMatching(/^[a-z]([-a-z0-9]{0,10}[a-z0-9])?$/);
const membership = fc.uniqueArray(clusterName, { minLength: 1, maxLength: 10 });
const rv = fc.oneof(
  fc.constant(''),
  fc.bigInt({ min: 1n, max: 10n ** 19n }).map(String),
  fc.string({ maxLength: 20 }),
);
const upstreamToken = fc.oneof(
  fc.constant(''),
  fc.base64String({ maxLength: 300 }),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
);

describe('continue token', () => {
  it('round-trips', () => {
    fc.assert(
      fc.property(
        membership.chain((names) =>
          fc.tuple(
            fc.constant(names),
            fc.nat({ max: names.length - 1 }),
            upstreamToken,
            fc.array(rv, { minLength: names.length, maxLength: names.length }),
            fc.nat({ max: 100_000 }),
          ),
        ),
        ([names, index, up, rvs, skip]) => {
          const m = prepareMembership(names);
          const map = new Map(m.names.map((n, i) => [n, rvs[i]!]));
          const t = encodeContinue(names, index, up, map, skip);
          expect(t).toMatch(/^[A-Za-z0-9_-]+$/);
          const d = decodeContinue(t, [...names].reverse());
          expect(d).toEqual({ ok: true, index, cluster: m.names[index], upstream: up, skip, rvs: map });
          // by name too
          expect(encodeContinue(m, m.names[index]!, up, map, skip)).toBe(t);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('refuses tokens from another membership', () => {
    fc.assert(
      fc.property(membership, membership, upstreamToken, (a, b, up) => {
        const sa = new Set(a);
        fc.pre(!(a.length === b.length && b.every((x) => sa.has(x))));
        const t = encodeContinue(a, 0, up, new Map());
        expect(decodeContinue(t, b)).toEqual({ ok: false, reason: 'membership' });
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws on garbage and only accepts canonical tokens', () => {
    const m = prepareMembership(['a', 'b', 'c']);
    const garbage = fc.oneof(
      fc.string({ maxLength: 100 }),
      fc.base64String({ maxLength: 100 }),
      fc.stringMatching(/^[A-Za-z0-9_-]{0,80}$/),
      fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v)).toString('base64url')),
      fc
        .tuple(fc.constantFrom(1, 2, '1'), fc.jsonValue(), fc.jsonValue(), fc.jsonValue())
        .map((v) => Buffer.from(JSON.stringify([...v, 0, '', '', ''])).toString('base64url')),
    );
    // real tokens and one-character mutations of them: garbage alone never decodes, and a property that
    // only ever sees refusals cannot notice a decoder that refuses everything
    const real = fc
      .tuple(fc.nat({ max: 2 }), upstreamToken, fc.array(rv, { minLength: 3, maxLength: 3 }), fc.nat(100))
      .map(([i, up, rvs, skip]) =>
        encodeContinue(m, i, up, new Map(m.names.map((n, j) => [n, rvs[j]!])), skip),
      );
    const mutated = fc
      .tuple(real, fc.nat(), fc.constantFrom(...'AQZaz09-_='.split('')))
      .map(([t, pos, c]) => t.slice(0, pos % t.length) + c + t.slice((pos % t.length) + 1));
    const seen = { decoded: 0, refused: 0 };
    fc.assert(
      fc.property(fc.oneof(garbage, real, mutated), (s) => {
        const d = decodeContinue(s, m);
        if (d.ok) {
          seen.decoded++;
          expect(encodeContinue(m, d.index, d.upstream, d.rvs, d.skip)).toBe(s);
        } else {
          seen.refused++;
          expect(['malformed', 'membership']).toContain(d.reason);
        }
      }),
      { numRuns: 10000 },
    );
    expect(seen.decoded).toBeGreaterThan(1000);
    expect(seen.refused).toBeGreaterThan(1000);
    expect(decodeContinue('', m)).toEqual({ ok: false, reason: 'malformed' });
    expect(() => encodeContinue(m, 'zz', '', new Map())).toThrow(RangeError);
    expect(() => encodeContinue(m, 3, '', new Map())).toThrow(RangeError);
  });

  it('stays well under 16 KB for 50 clusters with ~200-character upstream tokens', () => {
    const names = Array.from({ length: 50 }, (_, i) => `member-cluster-${i}`);
    fc.assert(
      fc.property(
        fc.base64String({ minLength: 200, maxLength: 240 }),
        fc.array(fc.bigInt({ min: 10n ** 9n, max: 10n ** 10n - 1n }).map(String), {
          minLength: 50,
          maxLength: 50,
        }),
        (up, rvs) => {
          const t = encodeContinue(names, 25, up, new Map(names.map((n, i) => [n, rvs[i]!])));
          expect(t.length).toBeLessThan(1400);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('maps failures to kube Statuses', () => {
    expect(continueErrorStatus('membership').code).toBe(410);
    expect(continueErrorStatus('membership').reason).toBe('Expired');
    expect(continueErrorStatus('malformed').code).toBe(400);
  });
});
