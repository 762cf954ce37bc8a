import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { ItemScanner } from '../merge/jsonsplit/item.ts';
import { decodeComposite, encodeComposite, prepareMembership } from '../merge/rv/index.ts';
import { scanWatchLine } from './bytes.ts';
import {
  INITIAL_EVENTS_END,
  JOINED_ANNOTATION,
  type MergeStep,
  RESUMED_ANNOTATION,
  UNAVAILABLE_ANNOTATION,
  type WatchEvent,
  type WatchLine,
  WatchMerger,
} from './merge.ts';

/** one scanner for the file's lines, as a watch reader keeps one for its stream */
const scanner = new ItemScanner();

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * Every test runs twice: with events as parsed objects, and with events as the upstream watch reader
 * hands them (read from their bytes, watchbytes.ts), which the merger rewrites at the byte level
 * where it can.
 */
let mode: 'parsed' | 'bytes' = 'parsed';

/** an event as the current mode hands it to the merger */
const asEvent = (ev: WatchEvent): WatchEvent =>
  mode === 'bytes' ? (scanWatchLine(enc.encode(JSON.stringify(ev)), scanner) ?? ev) : ev;

/** a merged line as text */
const text = (l: WatchLine) => (typeof l === 'string' ? l : dec.decode(l));

const membership = prepareMembership(['a', 'b']);

function merger(sendInitialEvents: boolean, allowBookmarks = true) {
  const m = new WatchMerger({
    view: { federation: false },
    membership,
    rvs: new Map([
      ['a', ''],
      ['b', ''],
    ]),
    clusters: ['a', 'b'],
    allowBookmarks,
    sendInitialEvents,
    initialPhases: ['a', 'b'],
  });
  const onEvent = m.onEvent.bind(m);
  m.onEvent = (cluster, ev) => onEvent(cluster, asEvent(ev));
  return m;
}

const cm = (name: string, rv: string) => ({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv },
});
const endOfInitial = (rv: string) => ({
  type: 'BOOKMARK',
  object: {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { resourceVersion: rv, annotations: { [INITIAL_EVENTS_END]: 'true' } },
  },
});

/** the per-cluster RVs of the last line a step writes */
function rvOf(step: MergeStep): Record<string, string> {
  if (step.kind !== 'emit') throw new Error('expired');
  const d = decodeComposite(JSON.parse(text(step.lines.at(-1)!)).object.metadata.resourceVersion, membership);
  if (!d.ok) throw new Error('undecodable');
  return Object.fromEntries(d.rvs);
}

/** the events a step writes, as [type, name, end-bookmark?] */
function lines(step: MergeStep): Array<[string, string]> {
  if (step.kind !== 'emit') throw new Error('expired');
  return step.lines.map((l) => {
    const ev = JSON.parse(text(l));
    const md = ev.object.metadata;
    return [ev.type, md.annotations?.[INITIAL_EVENTS_END] === 'true' ? 'END' : (md.name ?? '')];
  });
}

describe.each(['parsed', 'bytes'] as const)('%s events', (m) => {
  beforeEach(() => {
    mode = m;
  });

  describe('WatchMerger initial phases', () => {
    it('a restarted snapshot sends only what the client misses: changed as MODIFIED, vanished as DELETED', () => {
      const m = merger(true);
      const out: Array<[string, string]> = [];
      // cluster a: a cut after two of its initial events
      out.push(...lines(m.onEvent('a', { type: 'ADDED', object: cm('x', '5') })));
      out.push(...lines(m.onEvent('a', { type: 'ADDED', object: cm('y', '9') })));
      expect(m.inInitial('a')).toBe(true);
      m.restartInitial('a');
      // the new snapshot: x unchanged (not sent again), z new, y no longer there (DELETED at its end)
      out.push(...lines(m.onEvent('a', { type: 'ADDED', object: cm('x', '5') })));
      out.push(...lines(m.onEvent('a', { type: 'ADDED', object: cm('z', '11') })));
      out.push(...lines(m.onEvent('a', endOfInitial('12'))));
      expect(m.inInitial('a')).toBe(false);
      out.push(...lines(m.onEvent('b', endOfInitial('3'))));
      expect(out).toEqual([
        ['ADDED', 'x.clusterspace.a'],
        ['ADDED', 'y.clusterspace.a'],
        ['ADDED', 'z.clusterspace.a'],
        ['DELETED', 'y.clusterspace.a'],
        ['BOOKMARK', 'END'],
      ]);
    });

    it('during a cluster’s initial events its entry of the stream’s RV stays where the phase started', () => {
      const m = merger(false);
      lines(m.onEvent('b', endOfInitial('7')));
      // key order: y (RV 9) comes before x (RV 5); resuming from y's RV would lose x
      expect(rvOf(m.onEvent('a', { type: 'ADDED', object: cm('y', '9') }))).toEqual({ a: '', b: '7' });
      expect(rvOf(m.onEvent('a', { type: 'ADDED', object: cm('x', '5') }))).toEqual({ a: '', b: '7' });
      expect(m.clusterRV('a')).toBe('');
      lines(m.onEvent('a', endOfInitial('12')));
      expect(m.resourceVersion()).toBe(
        encodeComposite(
          membership,
          new Map([
            ['a', '12'],
            ['b', '7'],
          ]),
        ),
      );
      // live events after it carry their own RV
      expect(rvOf(m.onEvent('a', { type: 'MODIFIED', object: cm('x', '13') }))).toEqual({ a: '13', b: '7' });
    });

    it('a WatchList’s initial events carry their own RV, which a write of the cached object sends back', () => {
      // client-go 1.35 informers sync by WatchList and write cached objects back with their RV as the
      // precondition; a WatchList resumed from any RV gets every cluster's snapshot again, so nothing is lost
      const m = merger(true);
      lines(m.onEvent('b', endOfInitial('7')));
      expect(rvOf(m.onEvent('a', { type: 'ADDED', object: cm('y', '9') }))).toEqual({ a: '9', b: '7' });
      expect(rvOf(m.onEvent('a', { type: 'ADDED', object: cm('x', '5') }))).toEqual({ a: '5', b: '7' });
      // the stream's own position for a stays where its phase started until its snapshot ends
      expect(m.clusterRV('a')).toBe('');
    });

    it('an object changed between the snapshots comes as MODIFIED, once', () => {
      const m = merger(true);
      lines(m.onEvent('a', { type: 'ADDED', object: cm('x', '5') }));
      m.restartInitial('a');
      expect(lines(m.onEvent('a', { type: 'ADDED', object: cm('x', '7') }))).toEqual([
        ['MODIFIED', 'x.clusterspace.a'],
      ]);
      // cut again, mid-replay: the client now has x at 7
      m.restartInitial('a');
      expect(lines(m.onEvent('a', { type: 'ADDED', object: cm('x', '7') }))).toEqual([]);
      expect(lines(m.onEvent('a', endOfInitial('8')))).toEqual([]);
    });

    it('a plain watch (not WatchList) swallows the clusters’ end bookmarks and sends no fleet one', () => {
      const m = merger(false, false);
      lines(m.onEvent('a', { type: 'ADDED', object: cm('x', '5') }));
      expect(lines(m.onEvent('a', endOfInitial('6')))).toEqual([]);
      expect(m.inInitial('a')).toBe(false);
    });
  });

  describe('WatchMerger relay groups', () => {
    it('a group stream cut during its initial events restarts them; same objects (own RV) are not sent again', () => {
      const m = new WatchMerger({
        view: { federation: false },
        membership,
        rvs: new Map([
          ['a', ''],
          ['b', ''],
        ]),
        clusters: ['a', 'b'],
        allowBookmarks: false,
        sendInitialEvents: true,
        initialPhases: ['a,b'],
      });
      // a group's events: fleet objects, RV = the group's composite (own RV in the object's cluster entry)
      const fleetCm = (name: string, cluster: string, rvs: Record<string, string>) => ({
        kind: 'ConfigMap',
        apiVersion: 'v1',
        metadata: {
          name: `${name}.clusterspace.${cluster}`,
          uid: `uid-${cluster}-${name}`,
          labels: { 'fleet.karmada.io/cluster': cluster },
          resourceVersion: encodeComposite(membership, new Map(Object.entries(rvs))),
        },
      });
      const ev = (o: object) => ({ type: 'ADDED', object: o });
      expect(lines(m.onGroupEvent(['a', 'b'], ev(fleetCm('x', 'a', { a: '5', b: '' }))))).toEqual([
        ['ADDED', 'x.clusterspace.a'],
      ]);
      expect(lines(m.onGroupEvent(['a', 'b'], ev(fleetCm('y', 'b', { a: '5', b: '7' }))))).toHaveLength(1);
      expect(m.inInitial('a,b')).toBe(true);
      m.restartInitial('a,b');
      // the new snapshot comes in another order: the composite differs, the objects' own RVs do not
      expect(lines(m.onGroupEvent(['a', 'b'], ev(fleetCm('y', 'b', { a: '', b: '7' }))))).toEqual([]);
      expect(lines(m.onGroupEvent(['a', 'b'], ev(fleetCm('x', 'a', { a: '5', b: '7' }))))).toEqual([]);
      const end = {
        type: 'BOOKMARK',
        object: {
          kind: 'ConfigMap',
          apiVersion: 'v1',
          metadata: {
            resourceVersion: encodeComposite(
              membership,
              new Map([
                ['a', '9'],
                ['b', '9'],
              ]),
            ),
            annotations: { [INITIAL_EVENTS_END]: 'true' },
          },
        },
      };
      expect(lines(m.onGroupEvent(['a', 'b'], end))).toEqual([['BOOKMARK', 'END']]);
      expect(m.inInitial('a,b')).toBe(false);
    });
  });

  describe('WatchMerger RVs', () => {
    it('every event carries the composite of the last RV of each cluster, whatever the interleaving (property)', () => {
      const three = prepareMembership(['a', 'b', 'c']);
      const step = fc.record({
        cluster: fc.constantFrom('a', 'b', 'c'),
        rv: fc.integer({ min: 1, max: 1_000_000 }).map(String),
        bookmark: fc.boolean(),
      });
      fc.assert(
        fc.property(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) => {
          const start = new Map([
            ['a', '1'],
            ['b', ''],
            ['c', '3'],
          ]);
          const m = new WatchMerger({
            view: { federation: false },
            membership: three,
            rvs: start,
            clusters: ['a', 'b', 'c'],
            allowBookmarks: true,
            sendInitialEvents: false,
          });
          const want = new Map(start);
          for (const [k, s] of steps.entries()) {
            const ev: WatchEvent = s.bookmark
              ? {
                  type: 'BOOKMARK',
                  object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: s.rv } },
                }
              : { type: 'MODIFIED', object: cm(`o${k}`, s.rv) };
            const out = m.onEvent(s.cluster, asEvent(ev));
            want.set(s.cluster, s.rv);
            if (out.kind !== 'emit') throw new Error('expired');
            if (s.bookmark) continue;
            const got = JSON.parse(text(out.lines.at(-1)!)).object.metadata.resourceVersion;
            expect(got).toBe(encodeComposite(three, want));
          }
          expect(m.resourceVersion()).toBe(encodeComposite(three, want));
        }),
      );
    });
  });

  describe('WatchMerger bookmarks', () => {
    it('a cluster bookmark after the initial phase is offered for coalescing, never written at once', () => {
      const m = merger(true);
      lines(m.onEvent('a', endOfInitial('1')));
      lines(m.onEvent('b', endOfInitial('1')));
      const s = m.onEvent('a', {
        type: 'BOOKMARK',
        object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '4' } },
      });
      expect(s.kind === 'emit' && s.lines).toEqual([]);
      expect(s.kind === 'emit' && JSON.parse(String(s.bookmark)).type).toBe('BOOKMARK');
    });

    it('tells the client of a cluster it cannot hold, once the kind is known and the initial phase is over', () => {
      const m = merger(true);
      expect(lines(m.unavailable('cluster b: watch ended at once'))).toEqual([]);
      lines(m.onEvent('a', { type: 'ADDED', object: cm('x', '5') }));
      const s = m.onEvent('a', endOfInitial('6'));
      expect(lines(s)).toEqual([]); // still waiting for b
      const gone = m.clusterGone('b');
      expect(lines(gone).map(([t, n]) => `${t}:${n}`)).toEqual(['BOOKMARK:END', 'BOOKMARK:']);
      const notice = JSON.parse((gone as { lines: string[] }).lines[1]!);
      expect(notice.object.kind).toBe('ConfigMap');
      expect(notice.object.metadata.annotations[UNAVAILABLE_ANNOTATION]).toBe(
        'cluster b: watch ended at once',
      );
    });
  });

  describe('WatchMerger notices and membership changes', () => {
    /** a merger past its start: a plain watch, both clusters at RV 10 */
    function running(allowBookmarks: boolean) {
      const m = merger(false, allowBookmarks);
      for (const c of ['a', 'b']) lines(m.onEvent(c, endOfInitial('10')));
      lines(m.onEvent('a', { type: 'MODIFIED', object: cm('x', '11') }));
      return m;
    }
    const events = (step: MergeStep) =>
      step.kind === 'emit' ? step.lines.map((l) => JSON.parse(text(l))) : [JSON.parse(step.line)];

    it('tells unavailable and back only to a client that takes bookmarks (kubectl get -w prints every event)', () => {
      const quiet = running(false);
      expect(events(quiet.unavailable('cluster b: refused'))).toEqual([]);
      expect(events(quiet.resumed('cluster b'))).toEqual([]);
      // nothing queued for later either
      expect(lines(quiet.onEvent('a', { type: 'MODIFIED', object: cm('x', '12') }))).toEqual([
        ['MODIFIED', 'x.clusterspace.a'],
      ]);
      const told = running(true);
      const [down] = events(told.unavailable('cluster b: refused'));
      expect(down.type).toBe('BOOKMARK');
      expect(down.object.metadata.annotations[UNAVAILABLE_ANNOTATION]).toBe('cluster b: refused');
      const [back] = events(told.resumed('cluster b'));
      expect(back.object.metadata.annotations[RESUMED_ANNOTATION]).toBe('cluster b');
    });

    it('a joined cluster streams as ADDED under the old membership, then the new one is adopted', () => {
      const m = running(true);
      const next = prepareMembership(['a', 'b', 'c']);
      expect(events(m.changeMembership(next, ['c']))).toEqual([]);
      const added = events(m.onEvent('c', { type: 'ADDED', object: cm('y', '3') }));
      expect(added.map((e) => e.type)).toEqual(['ADDED']);
      expect(added[0].object.metadata.name).toBe('y.clusterspace.c');
      // mid-snapshot: a resume from this RV must not decode for the new membership (410, relist)
      expect(decodeComposite(added[0].object.metadata.resourceVersion, next).ok).toBe(false);
      const [joined] = events(m.onEvent('c', endOfInitial('7')));
      expect(joined.type).toBe('BOOKMARK');
      expect(joined.object.metadata.annotations[JOINED_ANNOTATION]).toBe('c');
      const d = decodeComposite(joined.object.metadata.resourceVersion, next);
      expect(d.ok && [...d.rvs]).toEqual([
        ['a', '11'],
        ['b', '10'],
        ['c', '7'],
      ]);
    });

    it('a second change while a cluster still joins waits for both before adopting the newest', () => {
      const m = running(true);
      lines(m.changeMembership(prepareMembership(['a', 'b', 'c']), ['c']));
      const last = prepareMembership(['a', 'b', 'c', 'd']);
      expect(events(m.changeMembership(last, ['d']))).toEqual([]);
      const [mid] = events(m.onEvent('d', endOfInitial('4')));
      expect(mid).toBeUndefined();
      const [joined] = events(m.onEvent('c', endOfInitial('7')));
      expect(joined.object.metadata.annotations[JOINED_ANNOTATION]).toBe('d, c');
      expect(decodeComposite(joined.object.metadata.resourceVersion, last).ok).toBe(true);
    });

    it('a cluster that joins down is not waited for; one that left outside the watch only re-encodes', () => {
      const m = running(true);
      const next = prepareMembership(['a', 'b', 'c']);
      lines(m.changeMembership(next, ['c']));
      const [b] = events(m.clusterGone('c'));
      expect(decodeComposite(b.object.metadata.resourceVersion, next).ok).toBe(true);
      const fewer = prepareMembership(['a', 'c']);
      const [bm] = events(m.changeMembership(fewer, []));
      expect(bm.type).toBe('BOOKMARK');
      expect(decodeComposite(bm.object.metadata.resourceVersion, fewer).ok).toBe(true);
      const relist = events(m.relist('cluster b left the fleet: relist'));
      expect(relist[0]).toMatchObject({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
    });
  });
});
