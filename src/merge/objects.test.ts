import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { looseJson, scalar, seeded, shuffled, text } from '../../test/helpers/loosejson.ts';
import { ListSplitter } from './jsonsplit.ts';
import {
  fleetMetadataText,
  fleetObjectText,
  membersOf,
  toFleetItemBytes,
  toFleetItemText,
  toFleetObject,
} from './objects.ts';

const view = { federation: true };
const rv = (own: string) => `9${own}`;

const key = fc.oneof(
  fc.constantFrom('fleet.karmada.io/cluster', 'app', '0', '17', '__proto__', 'name'),
  text,
);
/** labels and annotations: mostly maps, sometimes what a broken client sends */
const map = fc.oneof(
  { arbitrary: fc.dictionary(key, fc.oneof(text, scalar), { maxKeys: 4 }), weight: 6 },
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: scalar, weight: 1 },
  { arbitrary: fc.array(scalar, { maxLength: 2 }), weight: 1 },
);
const ref = fc.oneof(
  {
    arbitrary: shuffled(fc.record({ name: scalar, kind: text, uid: text }, { requiredKeys: [] })),
    weight: 4,
  },
  { arbitrary: scalar, weight: 1 },
);
const metadataArb = shuffled(
  fc.record(
    {
      name: fc.oneof(text, scalar),
      namespace: text,
      resourceVersion: fc.oneof(fc.stringMatching(/^[1-9][0-9]{0,8}$/), scalar),
      labels: map,
      annotations: map,
      ownerReferences: fc.oneof(
        { arbitrary: fc.array(ref, { maxLength: 3 }), weight: 4 },
        { arbitrary: scalar, weight: 1 },
      ),
      uid: text,
      managedFields: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
);
const objectRef = shuffled(fc.record({ name: fc.oneof(text, scalar), kind: text }, { requiredKeys: [] }));
/** pods, and sometimes events (objects that refer to others by name) */
const objectArb = fc
  .tuple(
    fc.record(
      {
        apiVersion: text,
        kind: text,
        metadata: fc.oneof({ arbitrary: metadataArb, weight: 8 }, { arbitrary: scalar, weight: 1 }),
        spec: fc.jsonValue({ maxDepth: 3 }),
        status: fc.jsonValue({ maxDepth: 3 }),
      },
      { requiredKeys: ['metadata'] },
    ),
    fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 5 },
      {
        arbitrary: fc.record({ involvedObject: objectRef, regarding: objectRef }, { requiredKeys: [] }),
        weight: 1,
      },
    ),
  )
  .map(([o, event]) => ({ ...o, ...(event ?? {}) }))
  .chain((o) => shuffled(fc.constant(o)));

/** what the reference path makes of a text: parse, rewrite, serialise */
const reference = (t: string, cluster: string, fed = true) =>
  JSON.stringify(toFleetObject({ federation: fed }, JSON.parse(t), cluster, rv));
/** the same objects, keys in the same order (JSON.parse orders integer keys first in both) */
const same = (a: string, b: string) =>
  expect(JSON.stringify(JSON.parse(a))).toBe(JSON.stringify(JSON.parse(b)));

describe('toFleetItemText', () => {
  it('gives the same object as a full parse-and-rewrite, for any item', () => {
    let spliced = 0;
    fc.assert(
      fc.property(
        objectArb,
        fc.integer(),
        fc.constantFrom('member1', 'karmada'),
        fc.boolean(),
        (obj, seed, cluster, fed) => {
          const t = looseJson(obj, seeded(seed));
          const v = { federation: fed };
          if (fleetObjectText(v, t, cluster, rv) !== undefined) spliced++;
          same(toFleetItemText(v, t, cluster, rv), reference(t, cluster, fed));
        },
      ),
      { numRuns: 3000 },
    );
    // the property must exercise the byte-level path, not only its parsing fallback
    expect(spliced).toBeGreaterThan(1000);
  });

  it('rewrites metadata at the byte level exactly as toFleetObject does', () => {
    let spliced = 0;
    let parsed = 0;
    fc.assert(
      fc.property(
        metadataArb,
        fc.integer(),
        fc.constantFrom('member1', 'karmada', 'c-2'),
        fc.boolean(),
        (md, seed, cluster, fed) => {
          const t = looseJson(md, seeded(seed));
          const v = { federation: fed };
          const got = fleetMetadataText(v, t, cluster, rv);
          const want = JSON.stringify(toFleetObject(v, { metadata: JSON.parse(t) }, cluster, rv).metadata);
          if (got === undefined) parsed++;
          else {
            spliced++;
            same(got, want);
          }
        },
      ),
      { numRuns: 5000 },
    );
    expect(spliced).toBeGreaterThan(2000);
    expect(parsed).toBeGreaterThan(0);
  });

  it('copies everything but metadata byte for byte', () => {
    const text =
      '{"metadata":{"name":"web","resourceVersion":"7"},"spec":{"x":1.50,"y":"\\u00e9"},"status":{}}';
    const out = toFleetItemText(view, text, 'member2', rv);
    expect(out.endsWith(',"spec":{"x":1.50,"y":"\\u00e9"},"status":{}}')).toBe(true);
    expect(JSON.parse(out).metadata).toEqual({
      name: 'web.clusterspace.member2',
      resourceVersion: '97',
      annotations: { 'fleet.karmada.io/cluster': 'member2' },
      labels: { 'fleet.karmada.io/cluster': 'member2' },
    });
  });

  it('leaves what it does not change as it came, whitespace and escapes included', () => {
    const md = '{ "name" : "w\\u00e9b" ,\n "labels" : { "a" : "\\"x\\"" }, "uid": "\\u2028" }';
    expect(fleetMetadataText(view, md, 'm1', rv)).toBe(
      '{ "name" : "wéb.clusterspace.m1" ,\n "labels" : { "a" : "\\"x\\"" ,"fleet.karmada.io/cluster":"m1"}, "uid": "\\u2028" ,"annotations":{"fleet.karmada.io/cluster":"m1"}}',
    );
    // a key written with escapes is compared by its value
    expect(JSON.parse(fleetMetadataText(view, '{"n\\u0061me":"x"}', 'm1', rv)!).name).toBe(
      'x.clusterspace.m1',
    );
    expect(fleetMetadataText(view, '{"name":"a","name":"b"}', 'm1', rv)).toBeUndefined();
  });
});

describe('toFleetItemBytes', () => {
  it('agrees with the parsing path on items split from a list body fed in random chunks', () => {
    const enc = new TextEncoder();
    let ranged = 0;
    fc.assert(
      fc.property(
        fc.array(objectArb, { maxLength: 4 }),
        fc.integer(),
        fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constantFrom(4096, 65536)),
        (items, seed, chunk) => {
          const rnd = seeded(seed);
          const body = enc.encode(
            `{"kind":"List","items":[${items.map((o) => looseJson(o, rnd)).join(',')}]}`,
          );
          const got: string[] = [];
          const s = new ListSplitter();
          for (let o = 0; o < body.length; o += chunk)
            s.push(body.subarray(o, o + chunk), (e) => {
              if (e.type !== 'item') return;
              if (e.metadata) ranged++;
              got.push(toFleetItemBytes(view, e.bytes, e.metadata, 'member1', rv));
            });
          s.end();
          const want = (JSON.parse(new TextDecoder().decode(body)).items as unknown[]).map((o) =>
            JSON.stringify(toFleetObject(view, o as Record<string, any>, 'member1', rv)),
          );
          expect(got.length).toBe(want.length);
          for (const [i, g] of got.entries()) same(g, want[i]!);
        },
      ),
      { numRuns: 1500 },
    );
    expect(ranged).toBeGreaterThan(300);
  });
});

describe('watch events', () => {
  it('an event object rewritten in place in the event line is the one toFleetObject makes', () => {
    const type = fc.constantFrom('ADDED', 'MODIFIED', 'DELETED');
    let spliced = 0;
    fc.assert(
      fc.property(type, objectArb, fc.integer(), (t, obj, seed) => {
        const line = looseJson({ type: t, object: obj }, seeded(seed));
        const m = membersOf(line, line.indexOf('{'));
        const at = m?.members.find((x) => x.key === 'object');
        const r = at && fleetObjectText(view, line, 'member1', rv, at.from, at.to);
        if (r === undefined) return;
        spliced++;
        const event = JSON.parse(`${line.slice(0, at!.from)}${r}${line.slice(at!.to)}`);
        expect(event.type).toBe(t);
        same(JSON.stringify(event.object), reference(JSON.stringify(JSON.parse(line).object), 'member1'));
      }),
      { numRuns: 1500 },
    );
    expect(spliced).toBeGreaterThan(500);
  });
});
