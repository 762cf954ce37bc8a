import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareResourceVersion, InvalidResourceVersionError } from '../../kube/resourceversion.ts';
import { base64urlDecode, base64urlEncode } from '../../util/base64.ts';
import {
  compositeWith,
  decodeComposite,
  encodeComposite,
  encodeCompositeFull,
  isFleetComposite,
  ownResourceVersion,
  planResourceVersion,
  prepareMembership,
} from './index.ts';

const clusterName = fc.stringMatching(/^[a-z]([-a-z0-9]{0,10}[a-z0-9])?$/);
const membershipArb = fc.uniqueArray(clusterName, { minLength: 0, maxLength: 12 });
const nonEmptyMembership = fc.uniqueArray(clusterName, { minLength: 1, maxLength: 12 });
/** canonical decimal RVs of 1..25 digits, as bigint so we can grow them numerically */
const decimalRV = fc.bigInt({ min: 0n, max: 10n ** 25n });
/** member RV: unknown (-1) or a decimal */
const memberRV = fc.oneof({ weight: 1, arbitrary: fc.constant(-1n) }, { weight: 6, arbitrary: decimalRV });
const rvString = (v: bigint) => (v < 0n ? '' : v.toString());

function vectorMap(names: readonly string[], v: readonly bigint[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i < names.length; i++) m.set(names[i]!, rvString(v[i]!));
  return m;
}

describe('compareResourceVersion (apimachinery semantics)', () => {
  it('matches the reference cases', () => {
    expect(compareResourceVersion('1', '2')).toBe(-1);
    expect(compareResourceVersion('10', '9')).toBe(1);
    expect(compareResourceVersion('123', '123')).toBe(0);
    expect(compareResourceVersion('99999999999999999999999', '100000000000000000000000')).toBe(-1);
    for (const bad of ['', '0', '01', 'a', '1a', ' 1', '-1']) {
      expect(() => compareResourceVersion(bad, '1')).toThrow(InvalidResourceVersionError);
      expect(() => compareResourceVersion('1', bad)).toThrow(InvalidResourceVersionError);
    }
  });
  it('agrees with numeric order for any well-formed pair', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 40n }),
        fc.bigInt({ min: 1n, max: 10n ** 40n }),
        (a, b) => {
          const want = a < b ? -1 : a > b ? 1 : 0;
          expect(compareResourceVersion(a.toString(), b.toString())).toBe(want);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('composite resourceVersion', () => {
  it('encodes the documented example layout', () => {
    const m = prepareMembership(['member2', 'member1']);
    const s = encodeComposite(
      m,
      new Map([
        ['member1', '12345'],
        ['member2', '987'],
      ]),
    );
    expect(s).toBe(`1${m.digest}0512345` + '03987');
    // the example quoted in the format comment at the top of rvcodec.ts
    expect(s).toBe('1936789192051234503987');
    // one known entry: the single form (member2 is index 1)
    expect(encodeComposite(m, new Map([['member2', '987']]))).toBe(`2${m.digest}11` + '03987');
    expect(encodeComposite(m, new Map())).toBe(`2${m.digest}`);
    // one cluster: the full form is as short
    const one = prepareMembership(['member1']);
    expect(encodeComposite(one, new Map([['member1', '5']]))).toBe(`1${one.digest}015`);
  });

  it('round-trips any vector (integer and opaque forms)', () => {
    const anyRV = fc.oneof(
      fc.constant(''),
      decimalRV.map(String),
      fc.string({ maxLength: 30 }),
      fc.string({ unit: 'grapheme', maxLength: 10 }),
    );
    fc.assert(
      fc.property(
        membershipArb.chain((names) =>
          fc.tuple(fc.constant(names), fc.array(anyRV, { minLength: names.length, maxLength: names.length })),
        ),
        ([names, rvs]) => {
          const map = new Map(names.map((n, i) => [n, rvs[i]!]));
          const s = encodeComposite(names, map);
          const d = decodeComposite(s, [...names].reverse());
          expect(d.ok).toBe(true);
          if (d.ok) expect(d.rvs).toEqual(map);
          expect(isFleetComposite(s)).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('is a canonical decimal RV when every member RV is a decimal or unknown', () => {
    fc.assert(
      fc.property(
        membershipArb.chain((names) =>
          fc.tuple(
            fc.constant(names),
            fc.array(memberRV, { minLength: names.length, maxLength: names.length }),
          ),
        ),
        ([names, v]) => {
          const s = encodeComposite(names, vectorMap(names, v));
          expect(s).toMatch(/^[1-9][0-9]*$/);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('is monotone under CompareResourceVersion when any cluster advances (same membership)', () => {
    const arb = nonEmptyMembership.chain((names) =>
      fc.tuple(
        fc.constant(names),
        fc.array(memberRV, { minLength: names.length, maxLength: names.length }),
        // per-cluster growth: 0 = unchanged; small and huge steps (so lengths change too)
        fc.array(
          fc.oneof(
            fc.constant(0n),
            fc.bigInt({ min: 1n, max: 10n }),
            fc.bigInt({ min: 1n, max: 10n ** 12n }),
            fc.constantFrom(1n, 9n, 90n, 900n),
          ),
          { minLength: names.length, maxLength: names.length },
        ),
      ),
    );
    fc.assert(
      fc.property(arb, ([names, v, steps]) => {
        const w = v.map((x, i) => {
          const step = steps[i]!;
          if (step === 0n) return x;
          return x < 0n ? step - 1n : x + step; // unknown → known counts as growth too
        });
        fc.pre(w.some((x, i) => x !== v[i]));
        const m = prepareMembership(names);
        const a = encodeComposite(m, vectorMap(names, v));
        const b = encodeComposite(m, vectorMap(names, w));
        expect(compareResourceVersion(a, b)).toBe(-1);
        expect(compareResourceVersion(b, a)).toBe(1);
      }),
      { numRuns: 10000 },
    );
  });

  it('is monotone along a random walk of single-cluster advances (watch stream)', () => {
    fc.assert(
      fc.property(
        nonEmptyMembership,
        fc.array(fc.tuple(fc.nat(), fc.bigInt({ min: 1n, max: 10n ** 6n })), { minLength: 1, maxLength: 60 }),
        (names, moves) => {
          const m = prepareMembership(names);
          const v = names.map(() => 1n);
          let prev = encodeComposite(m, vectorMap(names, v));
          for (const [i, step] of moves) {
            v[i % v.length]! += step;
            const next = encodeComposite(m, vectorMap(names, v));
            expect(compareResourceVersion(prev, next)).toBe(-1);
            prev = next;
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('detects a membership change', () => {
    fc.assert(
      fc.property(
        nonEmptyMembership,
        nonEmptyMembership,
        fc.array(memberRV, { minLength: 12, maxLength: 12 }),
        fc.boolean(),
        (a, b, v, opaque) => {
          const setA = new Set(a);
          fc.pre(!(b.length === a.length && b.every((x) => setA.has(x))));
          const rvs = vectorMap(a, v);
          if (opaque) rvs.set(a[0]!, 'opaque/rv');
          const s = encodeComposite(a, rvs);
          const d = decodeComposite(s, b);
          expect(d).toEqual({ ok: false, reason: 'membership' });
        },
      ),
      { numRuns: 5000 },
    );
    // the classic cases
    const s = encodeComposite(
      ['a', 'b', 'c'],
      new Map([
        ['a', '1'],
        ['b', '2'],
        ['c', '3'],
      ]),
    );
    expect(decodeComposite(s, ['a', 'b', 'd']).ok).toBe(false);
    expect(decodeComposite(s, ['a', 'b']).ok).toBe(false);
    expect(decodeComposite(s, ['a', 'b', 'c', 'd']).ok).toBe(false);
    expect(decodeComposite(s, ['c', 'b', 'a']).ok).toBe(true);
  });

  it('never throws on garbage and only decodes what it really encodes', () => {
    const garbage = fc.oneof(
      fc.string({ maxLength: 80 }),
      fc.string({ unit: 'binary', maxLength: 80 }),
      fc.stringMatching(/^1[0-9]{9,40}$/),
      fc.stringMatching(/^F1[A-Za-z0-9_-]{0,60}$/),
      fc.stringMatching(/^[0-9]{0,30}$/),
    );
    const memberships = [[], ['a'], ['a', 'b'], ['member1', 'member2', 'member3']].map((n) =>
      prepareMembership(n),
    );
    // real composites too, of the membership asked and of the others: garbage alone almost never
    // decodes, and a property that only ever sees failures cannot notice a decoder that refuses everything
    const real = fc
      .tuple(fc.constantFrom(...memberships), fc.array(memberRV, { maxLength: 3 }))
      .map(([m, v]) =>
        encodeComposite(
          m,
          vectorMap(
            m.names,
            m.names.map((_, i) => v[i] ?? -1n),
          ),
        ),
      );
    const seen = { decoded: 0, otherMembership: 0, malformed: 0 };
    fc.assert(
      fc.property(fc.oneof(garbage, real), fc.constantFrom(...memberships), (s, m) => {
        const d = decodeComposite(s, m);
        const looks = isFleetComposite(s);
        if (d.ok) {
          seen.decoded++;
          expect(looks).toBe(true);
          // what it encodes now, or (a vector of one known entry) the full form fleets emitted before
          expect([encodeComposite(m, d.rvs), encodeCompositeFull(m, d.rvs)]).toContain(s);
        } else if (d.reason === 'membership') {
          // a composite, of another membership
          seen.otherMembership++;
          expect(looks).toBe(true);
        } else {
          seen.malformed++;
          expect(looks).toBe(false);
        }
      }),
      { numRuns: 20000 },
    );
    expect(seen.decoded).toBeGreaterThan(1000);
    expect(seen.otherMembership).toBeGreaterThan(1000);
    expect(seen.malformed).toBeGreaterThan(1000);
  });

  it('mutations of a real composite never decode to a different vector', () => {
    fc.assert(
      fc.property(
        nonEmptyMembership.chain((names) =>
          fc.tuple(
            fc.constant(names),
            fc.array(memberRV, { minLength: names.length, maxLength: names.length }),
          ),
        ),
        fc.nat(),
        fc.string({ minLength: 1, maxLength: 2 }),
        ([names, v], pos, ins) => {
          const s = encodeComposite(names, vectorMap(names, v));
          const p = pos % (s.length + 1);
          const t = s.slice(0, p) + ins + s.slice(p + 1);
          const d = decodeComposite(t, names);
          if (d.ok) expect([encodeComposite(names, d.rvs), encodeCompositeFull(names, d.rvs)]).toContain(t);
        },
      ),
      { numRuns: 10000 },
    );
  });

  it('stays short: 50 clusters with 10-digit RVs', () => {
    const names = Array.from({ length: 50 }, (_, i) => `member-cluster-${i}`);
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: 10n ** 9n, max: 10n ** 10n - 1n }), { minLength: 50, maxLength: 50 }),
        (v) => {
          const s = encodeComposite(names, vectorMap(names, v));
          expect(s.length).toBe(610);
        },
      ),
      { numRuns: 200 },
    );
    // opaque RVs of 20 characters still fit comfortably in a URL
    const opaque = new Map(names.map((n) => [n, `opaque-${n}`.slice(0, 20)]));
    expect(encodeComposite(names, opaque).length).toBeLessThan(2000);
  });
});

describe('base64url', () => {
  it('round-trips bytes and rejects non-canonical input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (b) => {
        const s = base64urlEncode(b);
        expect(s).toMatch(/^[A-Za-z0-9_-]*$/);
        expect(base64urlDecode(s)).toEqual(b);
        expect(Buffer.from(b).toString('base64url')).toBe(s);
      }),
      { numRuns: 2000 },
    );
    expect(base64urlDecode('A')).toBeUndefined();
    expect(base64urlDecode('AB')).toBeUndefined(); // trailing bits set
    expect(base64urlDecode('AA=')).toBeUndefined();
    expect(base64urlDecode('a+b/')).toBeUndefined();
  });
});

describe('planResourceVersion', () => {
  const m = prepareMembership(['m1', 'm2', 'm3']);
  it('unset: most recent everywhere; match forbidden', () => {
    const p = planResourceVersion('list', m, undefined, undefined);
    expect(p.ok && [...p.perCluster.values()]).toEqual([{}, {}, {}]);
    const bad = planResourceVersion('list', m, '', 'NotOlderThan');
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.kind).toBe('invalid');
      expect(bad.status.code).toBe(422);
      expect(bad.status.message).toContain(
        'resourceVersionMatch is forbidden unless resourceVersion is provided',
      );
    }
  });
  it('"0": any everywhere, Exact refused, unknown match refused', () => {
    const p = planResourceVersion('watch', m, '0', 'NotOlderThan');
    expect(p.ok && p.perCluster.get('m2')).toEqual({
      resourceVersion: '0',
      resourceVersionMatch: 'NotOlderThan',
    });
    expect(planResourceVersion('list', m, '0', 'Exact').ok).toBe(false);
    expect(planResourceVersion('list', m, '0', 'Newest').ok).toBe(false);
  });
  it('composite: per-cluster RV, unknown entries read most recent', () => {
    const s = encodeComposite(
      m,
      new Map([
        ['m1', '10'],
        ['m3', '30'],
      ]),
    );
    const p = planResourceVersion('list', m, s, 'Exact');
    expect(p.ok).toBe(true);
    if (p.ok) {
      expect(p.perCluster.get('m1')).toEqual({ resourceVersion: '10', resourceVersionMatch: 'Exact' });
      expect(p.perCluster.get('m2')).toEqual({});
      expect(p.perCluster.get('m3')).toEqual({ resourceVersion: '30', resourceVersionMatch: 'Exact' });
    }
  });
  it('foreign or garbage composite: 410 Expired on list and watch', () => {
    const other = encodeComposite(['m1', 'm2'], new Map([['m1', '10']]));
    for (const verb of ['list', 'watch'] as const) {
      for (const rv of [other, '12345', 'junk']) {
        const p = planResourceVersion(verb, m, rv, undefined);
        expect(p.ok).toBe(false);
        if (!p.ok) {
          expect(p.kind).toBe('expired');
          expect(p.status.code).toBe(410);
          expect(p.status.reason).toBe('Expired');
        }
      }
    }
  });
  it('ownResourceVersion maps a composite back to the owning cluster', () => {
    const s = encodeComposite(
      m,
      new Map([
        ['m1', '10'],
        ['m2', '20'],
      ]),
    );
    expect(ownResourceVersion(s, m, 'm2')).toEqual({ ok: true, resourceVersion: '20' });
    expect(ownResourceVersion('', m, 'm2')).toEqual({ ok: true, resourceVersion: '' });
    const bad = ownResourceVersion(s, m, 'm3');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.status.code).toBe(400);
    expect(ownResourceVersion('nope', m, 'm1').ok).toBe(false);
  });
});

describe('compositeWith', () => {
  it('equals encodeComposite of the base with the cluster entry replaced', () => {
    let spliced = 0;
    const rvArb = fc.oneof(
      fc.constant(''),
      fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
      fc.constantFrom('abc', 'x/1', '007'),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom('karmada', 'member1', 'member2', 'member3', 'a', 'zz'), {
          minLength: 1,
        }),
        fc.array(rvArb, { minLength: 6, maxLength: 6 }),
        fc.nat(),
        rvArb,
        (names, rvList, pick, own) => {
          const base = new Map(names.map((n, i) => [n, rvList[i]!]));
          const cluster = names[pick % names.length]!;
          const f = compositeWith(names, base, cluster);
          expect(f(own)).toBe(encodeComposite(names, new Map(base).set(cluster, own)));
          // the byte writers' form (itembytes.ts): head, two-digit length, own, tail, for a member decimal
          if (f.head !== undefined && /^(0|[1-9][0-9]{0,98})$/.test(own)) {
            spliced++;
            expect(`${f.head}${String(own.length).padStart(2, '0')}${own}${f.tail}`).toBe(f(own));
          }
        },
      ),
      { numRuns: 3000 },
    );
    expect(spliced).toBeGreaterThan(200);
  });
});

describe('single form (one object of one cluster)', () => {
  /** vectors where most entries are unknown, so that zero or one known entry is common */
  const sparse = (names: readonly string[]) =>
    fc.array(fc.oneof({ weight: 3, arbitrary: fc.constant(-1n) }, { weight: 1, arbitrary: decimalRV }), {
      minLength: names.length,
      maxLength: names.length,
    });

  it('is monotone with the full form too: v ≤ w componentwise gives enc(v) < enc(w)', () => {
    let mixed = 0;
    fc.assert(
      fc.property(
        nonEmptyMembership.chain((names) =>
          fc.tuple(
            fc.constant(names),
            sparse(names),
            fc.array(fc.oneof(fc.constant(0n), fc.constant(0n), fc.bigInt({ min: 1n, max: 10n ** 12n })), {
              minLength: names.length,
              maxLength: names.length,
            }),
          ),
        ),
        ([names, v, steps]) => {
          const w = v.map((x, i) => (steps[i] === 0n ? x : x < 0n ? steps[i]! - 1n : x + steps[i]!));
          fc.pre(w.some((x, i) => x !== v[i]));
          const m = prepareMembership(names);
          const a = encodeComposite(m, vectorMap(names, v));
          const b = encodeComposite(m, vectorMap(names, w));
          if (a[0] !== b[0]) mixed++;
          expect(compareResourceVersion(a, b)).toBe(-1);
          expect(compareResourceVersion(b, a)).toBe(1);
          for (const [s, x] of [
            [a, v],
            [b, w],
          ] as const) {
            const d = decodeComposite(s, m);
            expect(d.ok && Object.fromEntries(d.rvs)).toEqual(Object.fromEntries(vectorMap(names, x)));
          }
        },
      ),
      { numRuns: 10000 },
    );
    expect(mixed).toBeGreaterThan(1000);
  });

  it("a list item's RV: no longer with more clusters, below the list's RV, back to the cluster's own RV for updates, and a watch from it starts that cluster there", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(clusterName, { minLength: 2, maxLength: 300 }),
        fc.nat(),
        decimalRV,
        fc.bigInt({ min: 0n, max: 10n ** 6n }),
        (names, pick, listRv, behind) => {
          const m = prepareMembership(names);
          const cluster = m.names[pick % m.names.length]!;
          // biome-ignore lint/complexity/useMathMinMax: BigInt operands, which Math.min does not take
          const own = (listRv - (behind > listRv ? listRv : behind)).toString();
          const base = new Map(m.names.map((n) => [n, listRv.toString()]));
          const item = compositeWith(m, new Map(), cluster)(own);
          expect(item).toBe(encodeComposite(m, new Map([[cluster, own]])));
          expect(item.length).toBeLessThanOrEqual(13 + String(m.names.length - 1).length + own.length);
          // the list's RV knows every cluster at least where the item was: it is never older
          expect(compareResourceVersion(item, encodeComposite(m, base))).toBe(-1);
          expect(ownResourceVersion(item, m, cluster)).toEqual({ ok: true, resourceVersion: own });
          const plan = planResourceVersion('watch', m, item, undefined);
          expect(plan.ok).toBe(true);
          if (!plan.ok) return;
          for (const [c, p] of plan.perCluster)
            expect(p).toEqual(c === cluster ? { resourceVersion: own } : {});
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('the full form of a one-entry vector (what fleets before the single form emitted) still decodes', () => {
    const m = prepareMembership(['a', 'b', 'c']);
    const legacy = encodeCompositeFull(m, new Map([['b', '42']]));
    expect(legacy).toBe(`1${m.digest}0002420` + '0');
    expect(ownResourceVersion(legacy, m, 'b')).toEqual({ ok: true, resourceVersion: '42' });
    // the same vector as its single form
    expect(decodeComposite(encodeComposite(m, new Map([['b', '42']])), m)).toEqual(
      decodeComposite(legacy, m),
    );
  });
});
