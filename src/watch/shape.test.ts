/**
 * What a merged watch does at its first events on the byte path (watch/bytes.ts) against the parsing path:
 * the watch's shape (kind, and the apiVersion the scanner noted, jsonsplit/facts.ts, instead of a walk of
 * the object) and the lines of many merged watches written in turn through one shared set of edits. The
 * events are adversarial: apiVersion given twice with different values, not a string, absent, after the
 * spec, a key with escapes, keys in any order, whitespace, bookmarks and ERROR events, kinds that change.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { looseJson, seeded, text } from '../../test/helpers/loosejson.ts';
import { ItemScanner } from '../merge/jsonsplit/item.ts';
import { prepareMembership } from '../merge/rv/index.ts';
import { scanWatchLine } from './bytes.ts';
import { type MergeStep, type WatchEvent, type WatchLine, WatchMerger } from './merge.ts';
import { WatchEventReader } from './read.ts';

const scanner = new ItemScanner();
const enc = new TextEncoder();
const dec = new TextDecoder();
const text1 = (l: WatchLine) => (typeof l === 'string' ? l : dec.decode(l));
const CLUSTERS = ['karmada', 'c-2', 'm3'];

function merger(federation: boolean, rv = '') {
  return new WatchMerger({
    view: { federation },
    membership: prepareMembership(CLUSTERS),
    rvs: new Map(CLUSTERS.map((c) => [c, rv])),
    clusters: CLUSTERS,
    allowBookmarks: true,
    sendInitialEvents: false,
  });
}

function seen(step: MergeStep): { lines: string[]; bookmark?: string; expired?: unknown } {
  if (step.kind === 'expired') return { lines: [], expired: JSON.parse(step.line) };
  return {
    lines: step.lines.map((l) => text1(l)),
    bookmark: step.bookmark && String(step.bookmark),
  };
}

/** the apiVersion member(s) of an object's text: absent, a string, another type, twice, escaped key */
const apiVersion = fc.oneof(
  fc.constant(''),
  fc.constantFrom('v1', 'apps/v1', 'x.io/v1beta1').map((v) => `"apiVersion":${JSON.stringify(v)},`),
  fc.constantFrom('1', 'null', '{"a":"v1"}', '["v1"]').map((v) => `"apiVersion":${v},`),
  fc
    .tuple(fc.constantFrom('v1', 'apps/v1', '7'), fc.constantFrom('v2', 'batch/v1'))
    .map(([a, b]) => `"apiVersion":"${a}","apiVersion":"${b}",`),
  fc.constant('"apiVersion":5,"apiVersion":"v1",'),
  fc.constant('"api\\u0056ersion":"v1",'),
);

const KINDS = ['"kind":"Pod",', '"kind":"ConfigMap",', '"kind":"Deployment",', '', '"kind":3,'];

/**
 * an object event's line, its apiVersion member(s) the kind's (a watch's objects of one kind have one
 * version: the byte path reads it when the kind changes) but placed anywhere, or a bookmark or an ERROR
 */
const line = (avOf: string[]) =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .record({
          type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'),
          k: fc.nat(KINDS.length - 1),
          name: text,
          rv: fc.stringMatching(/^[1-9][0-9]{0,6}$/),
          late: fc.boolean(),
          typeLast: fc.boolean(),
        })
        .map(({ type, k, name, rv, late, typeLast }) => {
          const kind = KINDS[k]!;
          const av = avOf[k]!;
          const md = `"metadata":{"name":${JSON.stringify(name)},"resourceVersion":"${rv}"}`;
          const spec = `"spec":{"containers":[{"name":"c","apiVersion":"nested"}],"nodeName":"n1"}`;
          // the apiVersion after the spec and metadata, or first
          const obj = late
            ? `{${kind}${md},${spec}${av ? `,${av.slice(0, -1)}` : ''}}`
            : `{${av}${kind}${md},${spec}}`;
          return typeLast ? `{ "object" :\t${obj} ,"type":"${type}" }` : `{"type":"${type}","object":${obj}}`;
        }),
    },
    {
      weight: 1,
      arbitrary: fc
        .stringMatching(/^[1-9][0-9]{0,6}$/)
        .map(
          (rv) =>
            `{"type":"BOOKMARK","object":{"kind":"Pod",${avOf[0]}"metadata":{"resourceVersion":"${rv}"}}}`,
        ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(
        '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"reason":"InternalError"}}',
      ),
    },
  );

/** events of clusters (index into CLUSTERS), each kind's apiVersion member(s) chosen once */
const stream = (n: number) =>
  fc
    .array(apiVersion, { minLength: KINDS.length, maxLength: KINDS.length })
    .chain((avOf) => fc.array(fc.tuple(fc.nat(2), line(avOf)), { minLength: 1, maxLength: n }));

describe("a merged watch's first events on the byte path", () => {
  it("takes the watch's apiVersion where parsing does (the last given), bookmarks included", () => {
    let raw = 0;
    fc.assert(
      fc.property(stream(6), fc.boolean(), (events, federation) => {
        const parsed = merger(federation, '1');
        const bytes = merger(federation, '1');
        for (const [c, l] of events) {
          const cluster = CLUSTERS[c]!;
          const ev = scanWatchLine(enc.encode(l), scanner);
          if (ev) raw++;
          const got = bytes.onEvent(cluster, ev ?? (JSON.parse(l) as WatchEvent));
          const want = parsed.onEvent(cluster, JSON.parse(l) as WatchEvent);
          const g = seen(got);
          const w = seen(want);
          // the byte path writes the object as it came (members, spacing): compared as objects
          expect(g.lines.map((x) => JSON.parse(x))).toEqual(w.lines.map((x) => JSON.parse(x)));
          // a bookmark is made from the shape alone: byte for byte
          expect(g.bookmark).toBe(w.bookmark);
          expect(bytes.heartbeat()).toBe(parsed.heartbeat());
          expect(bytes.resourceVersion()).toBe(parsed.resourceVersion());
        }
      }),
      { numRuns: 500 },
    );
    expect(raw).toBeGreaterThan(300);
  });

  it('writes the lines of many fresh watches, in turn, as each would alone (shared edits, splicers)', () => {
    fc.assert(
      fc.property(
        stream(30).chain((evs) =>
          fc.tuple(fc.array(fc.nat(7), { minLength: evs.length, maxLength: evs.length }), fc.constant(evs)),
        ),
        fc.integer(),
        ([to, evs], seed) => {
          const events = evs.map(([c, l], k) => [to[k]!, c, l] as const);
          const rnd = seeded(seed);
          // eight watches, two views, fed in turn through their readers (lines cut anywhere)
          const watches = Array.from({ length: 8 }, (_, k) => merger(k % 2 === 0, k < 4 ? '1' : ''));
          const alone = Array.from({ length: 8 }, (_, k) => merger(k % 2 === 0, k < 4 ? '1' : ''));
          const out: string[][] = watches.map(() => []);
          for (const [w, c, l] of events) {
            const cluster = CLUSTERS[c]!;
            const bytes = enc.encode(`${l}\n`);
            const cut = Math.floor(rnd() * bytes.length);
            const rd = new WatchEventReader({
              onEvent: (ev) => {
                const s = seen(watches[w]!.onEvent(cluster, ev));
                out[w]!.push(...s.lines, s.bookmark ?? '', s.expired ? JSON.stringify(s.expired) : '');
                return true;
              },
              onEnd: () => {},
            });
            rd.chunk(bytes.slice(0, cut));
            rd.chunk(bytes.slice(cut));
            rd.end();
          }
          // each watch alone, its own events only, read whole: the same bytes
          for (let w = 0; w < 8; w++) {
            const want: string[] = [];
            for (const [x, c, l] of events) {
              if (x !== w) continue;
              const ev = scanWatchLine(enc.encode(l), scanner) ?? (JSON.parse(l) as WatchEvent);
              const s = seen(alone[w]!.onEvent(CLUSTERS[c]!, ev));
              want.push(...s.lines, s.bookmark ?? '', s.expired ? JSON.stringify(s.expired) : '');
            }
            expect(out[w]).toEqual(want);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads loosely written pods of a fresh watch as parsing does (escapes, key order, whitespace)', () => {
    const pod = (rv: number) => ({
      type: 'MODIFIED',
      object: {
        kind: 'Pod',
        apiVersion: 'v1',
        metadata: { name: `p-é-${rv}`, namespace: 'ns', resourceVersion: String(rv), labels: { a: 'b"c' } },
        spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
      },
    });
    for (let seed = 0; seed < 200; seed++) {
      const rnd = seeded(seed);
      const parsed = merger(false, '1');
      const bytes = merger(false, '1');
      for (let k = 0; k < 3; k++) {
        const l = looseJson(pod(10 + k), rnd, { keyEscapes: 0.1 });
        const ev = scanWatchLine(enc.encode(l), scanner) ?? (JSON.parse(l) as WatchEvent);
        const g = seen(bytes.onEvent('c-2', ev));
        const w = seen(parsed.onEvent('c-2', JSON.parse(l) as WatchEvent));
        expect(g.lines.map((x) => JSON.parse(x))).toEqual(w.lines.map((x) => JSON.parse(x)));
        expect(bytes.heartbeat()).toBe(parsed.heartbeat());
      }
    }
  });
});
