import { describe, expect, it } from 'vitest';
import { CLUSTER_LABEL } from '../kube/selectors.ts';
import { decodeComposite, encodeComposite, prepareMembership } from '../merge/rv/index.ts';
import { MAX_TIMEOUT_MS, planWatch, type WatchPlan, watchTimeoutMs } from './plan.ts';

const membership = prepareMembership(['karmada', 'east', 'west']);
const targets = ['karmada', 'east', 'west'].map((cluster) => ({ cluster }));

function plan(query: string, plainNameCluster?: string): WatchPlan<{ cluster: string }> {
  const r = planWatch({ query: new URLSearchParams(query), targets, membership, plainNameCluster });
  if (!r.ok) throw new Error(`unexpected refusal: ${JSON.stringify(r)}`);
  return r.plan;
}

const obj = (qs: URLSearchParams) => Object.fromEntries(qs);

describe('planWatch', () => {
  it('asks a watch without RV of every cluster as a WatchList, so the end of its initial events is known', () => {
    const p = plan('watch=1&labelSelector=app%3Dweb&pretty=true');
    expect(p.chosen.map((t) => t.cluster)).toEqual(['karmada', 'east', 'west']);
    expect([...p.startRVs.values()]).toEqual(['', '', '']);
    expect(p.upgradesLegacy).toBe(true);
    expect(p.initialEvents).toBe(true);
    expect(p.sendInitialEvents).toBe(false);
    expect(obj(p.watchQuery('east'))).toEqual({
      watch: 'true',
      labelSelector: 'app=web',
      pretty: 'true',
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: 'true',
    });
    // a cluster that refuses the WatchList form gets the watch as the client asked it
    expect(obj(p.watchQuery('east', undefined, true))).toEqual({
      watch: 'true',
      labelSelector: 'app=web',
      pretty: 'true',
      allowWatchBookmarks: 'true',
    });
    expect(p.timeoutMs).toBeUndefined();
    // RV "0" too; a watch from a real RV replays history, no initial events
    expect(plan('watch=1&resourceVersion=0').watchQuery('east').get('sendInitialEvents')).toBe('true');
    expect(plan('watch=1&resourceVersion=0').watchQuery('east').get('resourceVersion')).toBe('0');
    const composite = encodeComposite(
      membership,
      new Map([
        ['karmada', '1'],
        ['east', '2'],
        ['west', '3'],
      ]),
    );
    const fromRV = plan(`watch=1&resourceVersion=${composite}`);
    expect(fromRV.initialEvents).toBe(false);
    expect(fromRV.watchQuery('east').has('sendInitialEvents')).toBe(false);
    // the client said no initial events: none asked
    expect(plan('watch=1&sendInitialEvents=false').initialEvents).toBe(false);
  });

  it('asks a cluster whose composite entry is empty (left out of the list) as a WatchList, the others from their RV', () => {
    const composite = encodeComposite(
      membership,
      new Map([
        ['karmada', '1'],
        ['east', ''],
        ['west', '3'],
      ]),
    );
    const p = plan(`watch=1&allowWatchBookmarks=true&resourceVersion=${composite}`);
    expect(p.upgradesLegacy).toBe(false);
    expect(['karmada', 'east', 'west'].map((c) => p.initialEventsOf(c))).toEqual([false, true, false]);
    expect(obj(p.watchQuery('east'))).toEqual({
      watch: 'true',
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: 'true',
    });
    expect(obj(p.watchQuery('west'))).toEqual({
      watch: 'true',
      resourceVersion: '3',
      allowWatchBookmarks: 'true',
    });
    // refused as a WatchList: the plain watch from "" the client's RV meant
    expect(obj(p.watchQuery('east', undefined, true))).toEqual({
      watch: 'true',
      allowWatchBookmarks: 'true',
    });
    // a WatchList client: every cluster
    expect(
      plan('watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan').initialEventsOf('west'),
    ).toBe(true);
  });

  it('gives each cluster its own RV from a composite, and resumes from the RV it is given', () => {
    const composite = encodeComposite(
      membership,
      new Map([
        ['karmada', '10'],
        ['east', '20'],
        ['west', '30'],
      ]),
    );
    const p = plan(`watch=1&resourceVersion=${composite}`);
    expect(p.startRVs.get('east')).toBe('20');
    expect(p.watchQuery('west').get('resourceVersion')).toBe('30');
    expect(p.watchQuery('west', '31').get('resourceVersion')).toBe('31');
    // a resume from nothing seen yet asks for the current state, never for RV ""
    expect(p.watchQuery('west', '').has('resourceVersion')).toBe(false);
  });

  it('asks WatchList of every cluster with NotOlderThan, and a resume no longer asks for initial events', () => {
    const p = plan(
      'watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
    );
    expect(p.sendInitialEvents).toBe(true);
    expect(p.allowBookmarks).toBe(true);
    const q = p.watchQuery('karmada');
    expect(q.get('sendInitialEvents')).toBe('true');
    expect(q.get('resourceVersionMatch')).toBe('NotOlderThan');
    expect(q.has('resourceVersion')).toBe(false);
    const resumed = p.watchQuery('karmada', '42');
    expect(resumed.has('sendInitialEvents')).toBe(false);
    expect(resumed.has('resourceVersionMatch')).toBe(false);
  });

  it('chooses clusters by the cluster label and field names, and never forwards the fleet part', () => {
    const p = plan(
      `watch=1&labelSelector=${encodeURIComponent(`${CLUSTER_LABEL}!=karmada,tier=1`)}&fieldSelector=metadata.name%3Dweb.clusterspace.west`,
    );
    expect(p.chosen.map((t) => t.cluster)).toEqual(['west']);
    const q = p.watchQuery('west');
    expect(q.get('labelSelector')).toBe('tier=1');
    expect(q.get('fieldSelector')).toBe('metadata.name=web');
    expect(obj(p.listQuery('west'))).toEqual({ labelSelector: 'tier=1', fieldSelector: 'metadata.name=web' });
    expect(obj(p.probeQuery())).toEqual({ labelSelector: 'tier=1', limit: '1' });
  });

  it('sends a group the client query with the fleet part removed, and resumes it from the composite', () => {
    const p = plan(
      `watch=1&timeoutSeconds=30&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&labelSelector=${encodeURIComponent(`${CLUSTER_LABEL}=east,a=b`)}`,
    );
    const g = p.groupQuery();
    expect(g.has('timeoutSeconds')).toBe(false);
    expect(g.get('labelSelector')).toBe('a=b');
    expect(g.get('sendInitialEvents')).toBe('true');
    // a plain watch's group is asked as a WatchList too (the end of its initial events must be known)
    const legacy = plan('watch=1').groupQuery();
    expect(legacy.get('sendInitialEvents')).toBe('true');
    expect(legacy.get('resourceVersionMatch')).toBe('NotOlderThan');
    expect(plan('watch=1').groupQuery('5').has('sendInitialEvents')).toBe(false);
    const r = p.groupQuery('123');
    expect(r.get('resourceVersion')).toBe('123');
    expect(r.has('sendInitialEvents')).toBe(false);
    expect(r.has('resourceVersionMatch')).toBe(false);
  });

  it('never forwards shardSelector (the fleet does not honour it), and a joined cluster starts as a WatchList', () => {
    const p = plan(
      `watch=1&shardSelector=${encodeURIComponent("shardRange(object.metadata.uid, '0x0', '0x8')")}&labelSelector=a%3Db`,
    );
    expect(p.watchQuery('east').has('shardSelector')).toBe(false);
    expect(p.listQuery('east').has('shardSelector')).toBe(false);
    expect(obj(p.joinQuery('west'))).toEqual({
      labelSelector: 'a=b',
      watch: 'true',
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: 'true',
    });
    const sel = plan(`watch=1&labelSelector=${encodeURIComponent(`${CLUSTER_LABEL}!=east`)}`);
    const later = [...targets, { cluster: 'north' }];
    expect(sel.choose(later).map((t) => t.cluster)).toEqual(['karmada', 'west', 'north']);
  });

  it('keeps what it plans from, not the caller query: later changes to it change no query', () => {
    const query = new URLSearchParams(
      'watch=1&resourceVersion=0&pretty=true&fieldSelector=metadata.name%21%3Dweb.clusterspace.north',
    );
    const r = planWatch({ query, targets, membership, plainNameCluster: undefined });
    if (!r.ok) throw new Error('refused');
    const before = [r.plan.watchQuery('east'), r.plan.joinQuery('north'), r.plan.groupQuery()].map(String);
    query.set('pretty', 'false');
    query.set('fieldSelector', 'metadata.name=other');
    query.set('labelSelector', 'x=y');
    query.delete('resourceVersion');
    expect([r.plan.watchQuery('east'), r.plan.joinQuery('north'), r.plan.groupQuery()].map(String)).toEqual(
      before,
    );
    // a cluster that joins later gets its own part of the field selector (north: the term is its own)
    expect(r.plan.joinQuery('north').get('fieldSelector')).toBe('metadata.name!=web');
    expect(r.plan.watchQuery('east').has('fieldSelector')).toBe(false);
    expect(r.plan.choose([...targets, { cluster: 'north' }]).map((t) => t.cluster)).toEqual([
      'karmada',
      'east',
      'west',
      'north',
    ]);
  });

  it('refuses a selector that does not parse with a 400 response', () => {
    const r = planWatch({
      query: new URLSearchParams('watch=1&labelSelector=a%20in%20('),
      targets,
      membership,
      plainNameCluster: undefined,
    });
    expect(r.ok).toBe(false);
    expect(!r.ok && 'respond' in r && r.respond.code).toBe(400);
  });

  it('answers a composite from another membership with the 410 ERROR event kube sends', () => {
    const other = prepareMembership(['a', 'b']);
    const foreign = encodeComposite(
      other,
      new Map([
        ['a', '1'],
        ['b', '2'],
      ]),
    );
    expect(decodeComposite(foreign, membership).ok).toBe(false);
    const r = planWatch({
      query: new URLSearchParams(`watch=1&resourceVersion=${foreign}`),
      targets,
      membership,
      plainNameCluster: undefined,
    });
    expect(!r.ok && 'errorEvent' in r && r.errorEvent.code).toBe(410);
  });
});

describe('watchTimeoutMs', () => {
  it('is the timeout in ms, none for absent, zero, negative or garbage', () => {
    expect(watchTimeoutMs('30')).toBe(30_000);
    for (const v of [null, '', '0', '-5', 'abc', 'Infinity']) expect(watchTimeoutMs(v)).toBeUndefined();
  });

  it('never exceeds what a timer can hold (past it, Node and workerd fire at once)', () => {
    expect(watchTimeoutMs('2147484')).toBe(MAX_TIMEOUT_MS);
    expect(watchTimeoutMs('1e12')).toBe(MAX_TIMEOUT_MS);
    expect(watchTimeoutMs('2147483')).toBe(2_147_483_000);
  });
});
