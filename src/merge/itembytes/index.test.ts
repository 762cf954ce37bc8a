/**
 * The byte-level rewriting (the item scanner's facts, itembytes.ts) against parse-rewrite-serialise
 * (toFleetObject, toFleetRow) on random pods, other objects, Table rows and watch events' objects, written
 * as other encoders may write them: whitespace between tokens, \u escapes in strings and keys, unicode,
 * keys in any order, duplicate keys, labels that are not maps.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { looseJson, scalar, seeded, shuffled, text } from '../../../test/helpers/loosejson.ts';
import { ByteSink } from '../../util/bytes.ts';
import { ListSplitter } from '../jsonsplit/index.ts';
import { ITEM, ItemScanner, ROW, SCAN_MORE } from '../jsonsplit/item.ts';
import { toFleetObject } from '../objects/index.ts';
import { LAST_APPLIED } from '../objects/lastapplied.ts';
import { compositeWith, prepareMembership } from '../rv/index.ts';
import { type ColumnDefinition, mergeColumns, toFleetRow } from '../table/index.ts';
import { itemView, writeFleetItem } from './index.ts';
import { writeFleetRow } from './row.ts';

/** one scanner for the file's scans, as a splitter keeps one for its items */
const scanner = new ItemScanner();
const scanItem = (b: Uint8Array, i: number, n: number, ctx: number, depth: number) =>
  scanner.scan(b, i, n, ctx, depth);
const lastFacts = () => scanner.facts;

const enc = new TextEncoder();
const dec = new TextDecoder();
const rv = (own: string) => `9${own}`;

const key = fc.oneof(fc.constantFrom('fleet.karmada.io/cluster', 'app', '0', '__proto__', 'name'), text);
const map = fc.oneof(
  { arbitrary: fc.dictionary(key, fc.oneof(text, scalar), { maxKeys: 4 }), weight: 16 },
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
const metadata = shuffled(
  fc.record(
    {
      name: fc.oneof(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/), text, scalar),
      namespace: text,
      resourceVersion: fc.oneof(fc.stringMatching(/^[1-9][0-9]{0,8}$/), scalar),
      labels: map,
      annotations: map,
      ownerReferences: fc.oneof(
        { arbitrary: fc.array(ref, { maxLength: 3 }), weight: 4 },
        { arbitrary: scalar, weight: 1 },
      ),
      managedFields: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
);
/** pod-shaped: containers, a node (a reference), sometimes a nominated node */
const pod = shuffled(
  fc.record(
    {
      kind: fc.oneof(fc.constant('Pod'), fc.constant(''), fc.constant('ConfigMap')),
      metadata: fc.oneof({ arbitrary: metadata, weight: 9 }, { arbitrary: scalar, weight: 1 }),
      spec: fc.oneof(
        {
          arbitrary: shuffled(
            fc.record(
              {
                containers: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 2 }), scalar),
                nodeName: fc.oneof(fc.stringMatching(/^node-[0-9]{1,3}$/), text, scalar),
                volumeName: text,
                restartPolicy: text,
              },
              { requiredKeys: [] },
            ),
          ),
          weight: 8,
        },
        { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
      ),
      status: fc.oneof(
        { arbitrary: shuffled(fc.record({ phase: text, podIP: text }, { requiredKeys: [] })), weight: 6 },
        { arbitrary: fc.record({ nominatedNodeName: text }), weight: 1 },
        { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
      ),
      involvedObject: shuffled(fc.record({ name: text, kind: text }, { requiredKeys: [] })),
    },
    { requiredKeys: ['metadata'] },
  ),
)
  .chain((o) => fc.tuple(fc.constant(o), fc.integer({ min: 0, max: 99 })))
  .map(([o, dice]) => {
    // a kind-less list item most of the time, sometimes with a kind, rarely an event-like object
    const { kind, involvedObject, ...rest } = o as Record<string, unknown>;
    return {
      ...rest,
      ...(dice < 30 && kind !== undefined ? { kind } : {}),
      ...(dice >= 95 ? { involvedObject } : {}),
    };
  });

/** the same objects, keys in the same order (JSON.parse orders integer keys first in both) */
const same = (a: string, b: string) =>
  expect(JSON.stringify(JSON.parse(a))).toBe(JSON.stringify(JSON.parse(b)));
const views = fc.constantFrom({ federation: true }, { federation: false });
const clusters = fc.constantFrom('member1', 'karmada', 'c-2');

describe('byte-level item rewriting', () => {
  it('gives the objects toFleetObject gives, for random pods split from list bodies in random chunks', () => {
    let bytePath = 0;
    let parsed = 0;
    fc.assert(
      fc.property(
        fc.array(pod, { maxLength: 4 }),
        fc.integer(),
        fc.oneof(fc.integer({ min: 1, max: 80 }), fc.constantFrom(4096, 65536)),
        clusters,
        views,
        (items, seed, chunk, cluster, view) => {
          const rnd = seeded(seed);
          const body = enc.encode(
            `{"kind":"PodList","items":[${items.map((o) => looseJson(o, rnd, { duplicateKeys: 0.03 })).join(',')}]}`,
          );
          const want = (JSON.parse(dec.decode(body)).items as Record<string, any>[]).map((o) =>
            JSON.stringify(toFleetObject(view, o, cluster, rv)),
          );
          const got: string[] = [];
          const s = new ListSplitter();
          // as the merge builds it (the constant texts encoded once); the other tests build theirs by hand
          const iv = itemView(view, cluster, rv);
          for (let o = 0; o < body.length; o += chunk)
            s.push(body.subarray(o, o + chunk), (e) => {
              if (e.type !== 'item') return;
              const sink = new ByteSink(16);
              if (e.facts && writeFleetItem(sink, e.bytes, e.facts, iv)) {
                bytePath++;
                got.push(dec.decode(sink.take()));
              } else {
                parsed++;
                got.push(JSON.stringify(toFleetObject(view, JSON.parse(dec.decode(e.bytes)), cluster, rv)));
              }
            });
          s.end();
          expect(got.length).toBe(want.length);
          for (const [i, g] of got.entries()) same(g, want[i]!);
        },
      ),
      { numRuns: 2000 },
    );
    // the property must exercise the byte-level path, and its refusals
    expect(bytePath).toBeGreaterThan(1000);
    expect(parsed).toBeGreaterThan(50);
  });

  it("splices an item's RV into the composite's single form from its bytes as compositeWith writes it", () => {
    const membership = prepareMembership(['member1', 'karmada', 'c-2', 'x']);
    const own = fc.oneof(
      fc.stringMatching(/^[0-9]{1,12}$/),
      fc.stringMatching(/^[1-9][0-9]{95,100}$/),
      fc.constantFrom('0', '00', '07', '1e3', '-1', '١٢', ''),
      text,
    );
    let spliced = 0;
    fc.assert(
      fc.property(own, clusters, views, fc.boolean(), (rv, cluster, view, escaped) => {
        const splicer = compositeWith(membership, new Map(), cluster);
        expect(splicer.singleHead).toBeDefined();
        const rvText = escaped
          ? `"${[...rv].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`
          : JSON.stringify(rv);
        const t = `{"kind":"Pod","metadata":{"name":"web","resourceVersion":${rvText}},"spec":{"containers":[]}}`;
        const b = enc.encode(t);
        expect(scanItem(b, 0, b.length, ITEM, 100)).toBe(b.length);
        const sink = new ByteSink(16);
        expect(writeFleetItem(sink, b, lastFacts(), itemView(view, cluster, splicer))).toBe(true);
        const want = JSON.stringify(toFleetObject(view, JSON.parse(t), cluster, splicer));
        expect(dec.decode(sink.take())).toBe(want);
        if (!escaped && /^(0|[1-9][0-9]{0,98})$/.test(rv)) spliced++;
      }),
      { numRuns: 1500 },
    );
    // about a fifth of the runs are plain decimal RVs the splicer takes: 300-352 of 1,500 in ten runs here,
    // so a bound of 300 failed now and then; 200 still says the splice itself ran hundreds of times
    expect(spliced).toBeGreaterThan(200);
  });

  it('writes items whose edits shrink them (escaped values decoded) as well as those they grow', () => {
    // an RV of \u escapes decoded by the RV map, names of escapes renamed: the text after an edit moves
    // left; a plain name after it moves right again (the writer's general path, and its in-place one)
    const same1 = (own: string) => own;
    const texts = [
      '{"metadata":{"name":"web","resourceVersion":"\\u0031\\u0032\\u0033\\u0034\\u0035","labels":{}},"spec":{"containers":[],"nodeName":"n1"}}',
      '{"metadata":{"name":"\\u0077\\u0065\\u0062\\u0077\\u0065\\u0062\\u0077\\u0065\\u0062","resourceVersion":"7"},"kind":"Pod"}',
      '{"metadata":{"resourceVersion":"\\u0037\\u0038","name":"a","annotations":{"x":"y"},"ownerReferences":[{"name":"\\u0072\\u0072\\u0072\\u0072"}]}}',
      '{"metadata":{"resourceVersion":"12","name":"a","annotations":{"x":"y"},"ownerReferences":[{"name":"rs"}]}}',
    ];
    for (const t of texts) {
      const b = enc.encode(t);
      for (const view of [{ federation: false }, { federation: true }]) {
        expect(scanItem(b, 0, b.length, ITEM, 100)).toBe(b.length);
        const sink = new ByteSink(16);
        sink.string('[');
        expect(writeFleetItem(sink, b, lastFacts(), itemView(view, 'c-2', same1))).toBe(true);
        sink.string(']');
        const want = JSON.stringify([toFleetObject(view, JSON.parse(t), 'c-2', same1)]);
        expect(dec.decode(sink.take())).toBe(want);
      }
    }
  });

  it("leaves objects whose annotations hold client-side apply's record, which names them, to toFleetObject", () => {
    // the scanner notes the record's key among the annotations' keys (facts.ts REFS_RECORD); the same
    // bytes in a value, or the key elsewhere, are no record
    const other = fc.dictionary(fc.constantFrom('a', 'kubectl.kubernetes.io/restartedAt', 'x-y'), text, {
      maxKeys: 2,
    });
    fc.assert(
      fc.property(other, other, fc.boolean(), clusters, views, (before, after, held, cluster, view) => {
        const record = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"ns"}}\n`;
        const annotations = held
          ? { ...before, [LAST_APPLIED]: record, ...after }
          : { ...before, note: `"${LAST_APPLIED}"`, ...after };
        const o = {
          kind: 'Pod',
          metadata: { name: 'web', namespace: 'ns', annotations, labels: { [LAST_APPLIED]: 'x' } },
          spec: { containers: [] },
        };
        const t = JSON.stringify(o);
        const b = enc.encode(t);
        expect(scanItem(b, 0, b.length, ITEM, 100)).toBe(b.length);
        const sink = new ByteSink(16);
        const iv = itemView(view, cluster, rv);
        const bytePath = writeFleetItem(sink, b, lastFacts(), iv);
        const shownPlain = cluster === 'karmada' && view.federation;
        expect(bytePath).toBe(!held || shownPlain);
        const want = JSON.stringify(toFleetObject(view, JSON.parse(t), cluster, rv));
        if (bytePath) same(dec.decode(sink.take()), want);
        // a record naming the object by its fleet name once shown (what the byte path would have missed)
        if (held && !shownPlain)
          expect(JSON.parse(JSON.parse(want).metadata.annotations[LAST_APPLIED]).metadata.name).not.toBe(
            'web',
          );
      }),
      { numRuns: 300 },
    );
  });

  it("gives the objects toFleetObject gives for watch events' objects", () => {
    let bytePath = 0;
    fc.assert(
      fc.property(
        fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'),
        pod,
        fc.integer(),
        clusters,
        (type, obj, seed, cluster) => {
          const rnd = seeded(seed);
          const objectText = looseJson({ kind: 'Pod', apiVersion: 'v1', ...obj }, rnd, {
            duplicateKeys: 0.03,
          });
          const line = enc.encode(
            `{"type":${JSON.stringify(type)},${' '.repeat(seed & 3)}"object":${objectText}}\n`,
          );
          const at = line.length - enc.encode(objectText).length - 2;
          const end = scanItem(line, at, line.length, ITEM, 100);
          expect(end).toBe(line.length - 2);
          const view = { federation: true };
          const sink = new ByteSink(16);
          const iv = itemView(view, cluster, rv);
          if (!writeFleetItem(sink, line.subarray(at, end), scanAgain(line.subarray(at, end)), iv)) return;
          bytePath++;
          const event = JSON.parse(`${dec.decode(line.subarray(0, at))}${dec.decode(sink.take())}}`);
          expect(event.type).toBe(type);
          same(
            JSON.stringify(event.object),
            JSON.stringify(toFleetObject(view, JSON.parse(objectText), cluster, rv)),
          );
        },
      ),
      { numRuns: 1500 },
    );
    expect(bytePath).toBeGreaterThan(500);
  });

  it('refuses what it cannot finish in the bytes it has, and agrees with JSON.parse on what it accepts', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.integer(), fc.nat(), (v, seed, cut) => {
        const t = enc.encode(
          looseJson({ metadata: { name: 'x' }, v }, seeded(seed), { keyEscapes: 0.1, duplicateKeys: 0.03 }),
        );
        const n = cut % (t.length + 1);
        const end = scanItem(t, 0, n, ITEM, 100);
        if (n < t.length) expect(end).toBe(SCAN_MORE);
        else expect(end).toBe(t.length);
      }),
      { numRuns: 1500 },
    );
  });
});

/** facts of a whole item (a copy of the bytes: offsets relative to it) */
function scanAgain(b: Uint8Array) {
  expect(scanItem(b, 0, b.length, ITEM, 100)).toBe(b.length);
  return lastFacts();
}

const column = (name: string, format = ''): ColumnDefinition => ({
  name,
  type: 'string',
  format,
  description: '',
  priority: 0,
});
const columnSets = fc.constantFrom(
  [column('Name', 'name'), column('Ready'), column('Status'), column('Node'), column('Nominated Node')],
  [column('Name', 'name'), column('Status'), column('Age')],
  [column('Name'), column('Node'), column('Age'), column('IP')],
  [column('Object'), column('Claim')],
);
const cell = fc.oneof(
  fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,12}[a-z0-9])?$/),
  text,
  fc.constantFrom('<none>', '', 'pod/web-1', 'ns/claim-1'),
  fc.integer(),
  fc.constant(null),
);
const row = shuffled(
  fc.record(
    {
      cells: fc.oneof(
        { arbitrary: fc.array(cell, { maxLength: 6 }), weight: 9 },
        { arbitrary: scalar, weight: 1 },
      ),
      object: fc.oneof(
        {
          arbitrary: shuffled(
            fc.record({ kind: fc.constant('PartialObjectMetadata'), apiVersion: text, metadata }),
          ),
          weight: 6,
        },
        { arbitrary: pod.map((p) => ({ ...p, kind: 'Pod' })), weight: 2 },
        { arbitrary: scalar, weight: 1 },
      ),
      conditions: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
);

describe('byte-level Table rows', () => {
  it('give the rows toFleetRow gives, under merged columns of clusters that print different ones', () => {
    let bytePath = 0;
    fc.assert(
      fc.property(
        fc.array(columnSets, { minLength: 1, maxLength: 3 }),
        fc.nat(),
        row,
        fc.integer(),
        clusters,
        views,
        (sets, pick, r, seed, cluster, view) => {
          const merged = mergeColumns(sets);
          const input = pick % sets.length;
          const t = enc.encode(looseJson(r, seeded(seed), { duplicateKeys: 0.03 }));
          const want = JSON.stringify(
            toFleetRow(view, JSON.parse(dec.decode(t)), merged, input, cluster, rv),
          );
          expect(scanItem(t, 0, t.length, ROW, 100)).toBe(t.length);
          const sink = new ByteSink(16);
          const iv = itemView(view, cluster, rv);
          if (!writeFleetRow(sink, t, lastFacts(), iv, merged, input)) return;
          bytePath++;
          same(dec.decode(sink.take()), want);
        },
      ),
      { numRuns: 3000 },
    );
    expect(bytePath).toBeGreaterThan(1200);
  });

  it("give the rows toFleetRow gives when a cluster's cells stand under the merged columns as they came", () => {
    // one cluster's columns, or clusters printing the same: the cells stay in place, the Cluster cell
    // joins them after the name cell, and the whole row is written as edits (itembytes-row.ts)
    let bytePath = 0;
    fc.assert(
      fc.property(
        columnSets.chain((set) =>
          fc.tuple(
            fc.constant(set),
            fc.array(cell, { minLength: set.length, maxLength: set.length }),
            row,
            fc.integer({ min: 1, max: 3 }),
          ),
        ),
        fc.integer(),
        clusters,
        views,
        ([set, cells, r, copies], seed, cluster, view) => {
          const merged = mergeColumns(Array.from({ length: copies }, () => set));
          const input = seed & 1 ? copies - 1 : 0;
          const t = enc.encode(looseJson({ ...r, cells }, seeded(seed), { duplicateKeys: 0.03 }));
          const want = JSON.stringify(
            toFleetRow(view, JSON.parse(dec.decode(t)), merged, input, cluster, rv),
          );
          expect(scanItem(t, 0, t.length, ROW, 100)).toBe(t.length);
          const sink = new ByteSink(16);
          sink.string('[');
          if (!writeFleetRow(sink, t, lastFacts(), itemView(view, cluster, rv), merged, input)) return;
          sink.string(']');
          bytePath++;
          same(dec.decode(sink.take()), `[${want}]`);
        },
      ),
      { numRuns: 3000 },
    );
    expect(bytePath).toBeGreaterThan(1500);
  });
});
