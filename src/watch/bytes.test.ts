/**
 * Merged watch events on the byte path (watchbytes.ts) against parse-rewrite-serialise: the same random
 * event sequences, as loosely written JSON lines (whitespace, \u escapes in strings and keys, unicode,
 * keys in any order, members given twice, members the event does not need), go to one merger parsed and
 * to another as the upstream reader hands them (scanned, RawWatchEvent): every step's lines must be the
 * same objects, and the stream's RV the same after each.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { looseJson, scalar, seeded, shuffled, text } from '../../test/helpers/loosejson.ts';
import { ItemScanner } from '../merge/jsonsplit/item.ts';
import { prepareMembership } from '../merge/rv/index.ts';
import { RawWatchEvent, scanWatchLine } from './bytes.ts';
import { type MergeStep, type WatchEvent, type WatchLine, WatchMerger } from './merge.ts';
import { WatchEventReader } from './read.ts';

/** one scanner for the file's lines, as a watch reader keeps one for its stream */
const scanner = new ItemScanner();

const enc = new TextEncoder();
const dec = new TextDecoder();
const text1 = (l: WatchLine) => (typeof l === 'string' ? l : dec.decode(l));

const map = fc.oneof(
  {
    arbitrary: fc.dictionary(fc.oneof(fc.constantFrom('fleet.karmada.io/cluster', 'app'), text), text, {
      maxKeys: 3,
    }),
    weight: 12,
  },
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: scalar, weight: 1 },
);
const rvText = fc.oneof(
  { arbitrary: fc.stringMatching(/^[1-9][0-9]{0,8}$/), weight: 12 },
  { arbitrary: fc.constant(''), weight: 1 },
  { arbitrary: scalar, weight: 1 },
);
const metadata = shuffled(
  fc.record(
    {
      name: fc.oneof(
        { arbitrary: fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,12}[a-z0-9])?$/), weight: 8 },
        // long enough to be shortened (names.ts), or with unicode and escapes
        { arbitrary: fc.stringMatching(/^[a-z]{240,250}$/), weight: 1 },
        { arbitrary: text, weight: 1 },
        { arbitrary: scalar, weight: 1 },
      ),
      namespace: fc.oneof(
        { arbitrary: fc.constantFrom('ns', 'default'), weight: 8 },
        { arbitrary: scalar, weight: 1 },
      ),
      uid: fc.oneof({ arbitrary: fc.uuid(), weight: 6 }, { arbitrary: scalar, weight: 1 }),
      resourceVersion: rvText,
      labels: map,
      annotations: map,
      ownerReferences: fc.array(shuffled(fc.record({ name: text, kind: text }, { requiredKeys: [] })), {
        maxLength: 2,
      }),
      managedFields: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  ),
);
const object = shuffled(
  fc.record(
    {
      kind: fc.oneof(
        { arbitrary: fc.constantFrom('Pod', 'ConfigMap'), weight: 12 },
        { arbitrary: fc.constantFrom('Event', 'Table', ''), weight: 1 },
        { arbitrary: scalar, weight: 1 },
      ),
      apiVersion: fc.oneof({ arbitrary: fc.constant('v1'), weight: 8 }, { arbitrary: scalar, weight: 1 }),
      metadata: fc.oneof({ arbitrary: metadata, weight: 12 }, { arbitrary: scalar, weight: 1 }),
      spec: shuffled(
        fc.record(
          {
            containers: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 2 }),
            nodeName: fc.oneof(fc.stringMatching(/^node-[0-9]{1,3}$/), text),
          },
          { requiredKeys: [] },
        ),
      ),
      data: fc.dictionary(text, text, { maxKeys: 3 }),
    },
    { requiredKeys: ['metadata'] },
  ),
).map((o) =>
  // one apiVersion per kind, as a watch's objects have (the byte path looks it up when the kind changes)
  typeof o.kind === 'string' && o.kind ? { ...o, apiVersion: `v1/${o.kind}` } : o,
);
const event = shuffled(
  fc.record(
    {
      type: fc.oneof(
        { arbitrary: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), weight: 16 },
        { arbitrary: fc.constantFrom('BOOKMARK', 'ERROR', 'ÄNDERUNG'), weight: 1 },
      ),
      object,
      extra: fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined }),
    },
    { requiredKeys: ['type', 'object'] },
  ),
);

const CLUSTERS = ['karmada', 'c-2', `m${'x'.repeat(40)}`];

function merger(federation: boolean, initial: boolean, sendInitialEvents: boolean) {
  return new WatchMerger({
    view: { federation },
    membership: prepareMembership(CLUSTERS),
    rvs: new Map(CLUSTERS.map((c) => [c, ''])),
    clusters: CLUSTERS,
    allowBookmarks: true,
    sendInitialEvents,
    initialPhases: initial ? CLUSTERS : [],
  });
}

/** a step's lines as objects (and what else it carries) */
function seen(step: MergeStep) {
  if (step.kind === 'expired') return { expired: JSON.parse(step.line) };
  return {
    lines: step.lines.map((l) => JSON.parse(text1(l))),
    bookmark: step.bookmark && JSON.parse(String(step.bookmark)),
  };
}

describe('merged watch events on the byte path', () => {
  it('give the objects parse-rewrite-serialise gives, step by step, RVs and initial phases included', () => {
    let bytePath = 0;
    let fallback = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(0, 1, 2), event), { minLength: 1, maxLength: 8 }),
        fc.integer(),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (events, seed, federation, initial, wl) => {
          const rnd = seeded(seed);
          const parsed = merger(federation, initial, wl);
          const bytes = merger(federation, initial, wl);
          for (const [c, ev] of events) {
            const cluster = CLUSTERS[c]!;
            const line = looseJson(ev, rnd, { duplicateKeys: 0.02 });
            const raw = scanWatchLine(enc.encode(line), scanner);
            const want = parsed.onEvent(cluster, JSON.parse(line) as WatchEvent);
            const got = bytes.onEvent(cluster, raw ?? (JSON.parse(line) as WatchEvent));
            if (got.kind === 'emit' && got.lines.some((l) => typeof l !== 'string')) bytePath++;
            else fallback++;
            expect(seen(got)).toEqual(seen(want));
            expect(bytes.resourceVersion()).toBe(parsed.resourceVersion());
            expect(bytes.heartbeat()).toBe(parsed.heartbeat());
          }
          // the clusters' initial events end (with what a restart left behind): the same again
          for (const cluster of CLUSTERS) {
            const end = {
              type: 'BOOKMARK',
              object: {
                kind: 'Pod',
                apiVersion: 'v1',
                metadata: { resourceVersion: '99', annotations: { 'k8s.io/initial-events-end': 'true' } },
              },
            };
            const line = enc.encode(JSON.stringify(end));
            expect(seen(bytes.onEvent(cluster, scanWatchLine(line, scanner)!))).toEqual(
              seen(parsed.onEvent(cluster, end)),
            );
          }
          expect(bytes.resourceVersion()).toBe(parsed.resourceVersion());
        },
      ),
      { numRuns: 700 },
    );
    // the property must exercise the byte path, and its fallbacks
    expect(bytePath).toBeGreaterThan(500);
    expect(fallback).toBeGreaterThan(100);
  });

  it('restarted initial events (replayed objects dropped or MODIFIED, vanished ones DELETED) as by parsing', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), rvText), { minLength: 1, maxLength: 6 }),
        (objs) => {
          const line = (name: string, rv: unknown) =>
            `{ "object" : {"metadata":{"resourceVersion":${JSON.stringify(rv)},"name":"${name}","namespace":"ns"},"kind":"Pod","apiVersion":"v1"}, "type":"ADDED"}`;
          const parsed = merger(false, true, true);
          const bytes = merger(false, true, true);
          const both = (l: string) => {
            expect(
              seen(bytes.onEvent('c-2', scanWatchLine(enc.encode(l), scanner) ?? JSON.parse(l))),
            ).toEqual(seen(parsed.onEvent('c-2', JSON.parse(l))));
          };
          for (const [n, rv] of objs) both(line(n, rv));
          parsed.restartInitial('c-2');
          bytes.restartInitial('c-2');
          for (const [n, rv] of objs.slice(1).reverse()) both(line(n, rv));
          both(
            '{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"50","annotations":{"k8s.io/initial-events-end":"true"}}}}',
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("restarted initial events' DELETED stubs carry name, namespace and uid as by parsing", () => {
    // the identity comes from where the scanner noted it: absent, a string, another type, given twice
    const member = (k: string) =>
      fc.oneof(
        fc.constant(''),
        text.map((v) => `,"${k}":${JSON.stringify(v)}`),
        scalar.map((v) => `,"${k}":${JSON.stringify(v)}`),
        fc.tuple(scalar, text).map(([a, b]) => `,"${k}":${JSON.stringify(a)},"${k}":${JSON.stringify(b)}`),
      );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), member('namespace'), member('uid')), {
          minLength: 1,
          maxLength: 5,
        }),
        (objs) => {
          const line = (name: string, ns: string, uid: string, rv: string) =>
            `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"${name}"${ns}${uid},"resourceVersion":"${rv}"}}}`;
          const parsed = merger(false, true, true);
          const bytes = merger(false, true, true);
          const both = (l: string) => {
            expect(
              seen(bytes.onEvent('c-2', scanWatchLine(enc.encode(l), scanner) ?? JSON.parse(l))),
            ).toEqual(seen(parsed.onEvent('c-2', JSON.parse(l))));
          };
          for (const [k, [n, ns, uid]] of objs.entries()) both(line(n, ns, uid, String(k + 1)));
          parsed.restartInitial('c-2');
          bytes.restartInitial('c-2');
          both(
            '{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"50","annotations":{"k8s.io/initial-events-end":"true"}}}}',
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads what JSON.parse reads, and refuses what it refuses (mutated lines)', () => {
    fc.assert(
      fc.property(event, fc.integer(), fc.nat(), fc.nat(255), (ev, seed, at, byte) => {
        const rnd = seeded(seed);
        const good = enc.encode(looseJson(ev, rnd, { duplicateKeys: 0.05 }));
        for (const b of [
          good,
          Uint8Array.from([...good.subarray(0, at % good.length), byte, ...good.subarray(at % good.length)]),
        ]) {
          let want: WatchEvent | undefined;
          try {
            want = JSON.parse(dec.decode(b));
          } catch {
            want = undefined;
          }
          const raw = scanWatchLine(b, scanner);
          if (!raw) continue;
          // read: exactly what parsing reads
          expect(want).toBeDefined();
          expect(raw.type).toBe(want!.type);
          expect(raw.object).toEqual(want!.object);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('the upstream reader hands raw events, split across chunks anywhere; what it cannot scan it parses', () => {
    const lines = [
      '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"é€𝄞","resourceVersion":"5"}}}',
      '{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"x"}},"type":"DELETED"}',
      '  {"object":{"metadata":{}},"type":"BOOKMARK"}  \r',
    ];
    const all = enc.encode(`${lines.join('\n')}\n`);
    for (let cut = 1; cut < all.length; cut += 7) {
      const got: Array<[string, boolean, unknown]> = [];
      const r = new WatchEventReader({
        onEvent: (ev) => {
          got.push([ev.type, ev instanceof RawWatchEvent, ev.object.metadata?.name]);
          return true;
        },
        onEnd: () => {},
      });
      r.chunk(all.slice(0, cut));
      r.chunk(all.slice(cut));
      r.end();
      expect(got).toEqual([
        ['ADDED', true, 'é€𝄞'],
        // `type` given twice: parsed (JSON.parse keeps the last)
        ['DELETED', false, 'x'],
        ['BOOKMARK', true, undefined],
      ]);
    }
  });
});
