import { describe, expect, it } from 'vitest';
import { CLUSTER_LABEL } from '../kube/selectors.ts';
import { encodeContinue } from '../merge/continue.ts';
import { encodeComposite, prepareMembership } from '../merge/rv/index.ts';
import { MATCHES_NOTHING } from '../plan/targets.ts';
import { type ListPlan, listLimit, planList } from './plan.ts';

// fleet order: control plane first, then members by name
const targets = ['karmada', 'east', 'west'].map((cluster) => ({ cluster }));
const membership = prepareMembership(targets.map((t) => t.cluster));

function plan(query: string, plainNameCluster?: string): ListPlan<{ cluster: string }> {
  const p = planList({ query: new URLSearchParams(query), targets, membership, plainNameCluster });
  if ('code' in p) throw new Error(`unexpected Status ${p.code}: ${p.message}`);
  return p;
}

/** cluster → the exact upstream query */
function queries(p: ListPlan<{ cluster: string }>): Record<string, string> {
  return Object.fromEntries(p.asks.map((a) => [a.target.cluster, p.queryFor(a).toString()]));
}

const rvs = (o: Record<string, string>) => new Map(Object.entries(o));

describe('planList: first page', () => {
  it('asks every cluster at the most recent RV, forwarding the rest of the query as sent', () => {
    const p = plan('limit=500&timeout=32s&labelSelector=app%3Dweb');
    expect(p.limit).toBe(500);
    expect(p.emptyProbe).toBe(false);
    expect(queries(p)).toEqual({
      karmada: 'timeout=32s&labelSelector=app%3Dweb&limit=500',
      east: 'timeout=32s&labelSelector=app%3Dweb&limit=500',
      west: 'timeout=32s&labelSelector=app%3Dweb&limit=500',
    });
    expect([...p.rvs]).toEqual([
      ['east', ''],
      ['karmada', ''],
      ['west', ''],
    ]);
  });

  it('splits a composite resourceVersion into each cluster own', () => {
    const rv = encodeComposite(membership, rvs({ karmada: '10', east: '200', west: '' }));
    const p = plan(`resourceVersion=${encodeURIComponent(rv)}&resourceVersionMatch=NotOlderThan`);
    expect(queries(p)).toEqual({
      karmada: 'resourceVersion=10&resourceVersionMatch=NotOlderThan',
      east: 'resourceVersion=200&resourceVersionMatch=NotOlderThan',
      // unknown for this cluster: its most recent
      west: '',
    });
  });

  it('never forwards shardSelector (KEP-5866): the fleet does not honour it, so no cluster may filter', () => {
    const sel = encodeURIComponent("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')");
    const p = plan(`shardSelector=${sel}&labelSelector=a%3Db&limit=3`);
    for (const a of p.asks) {
      const q = p.queryFor(a);
      expect(q.has('shardSelector')).toBe(false);
      expect(q.toString()).toBe('labelSelector=a%3Db&limit=3');
    }
    // on a later page too
    const token = encodeContinue(membership, 'east', 'E', rvs({ karmada: '1', east: '2', west: '3' }));
    const next = plan(`continue=${token}&shardSelector=${sel}`);
    for (const a of next.asks) expect(next.queryFor(a).has('shardSelector')).toBe(false);
  });

  it('passes resourceVersion=0 to every cluster', () => {
    expect(Object.values(queries(plan('resourceVersion=0')))).toEqual(Array(3).fill('resourceVersion=0'));
  });

  it('refuses a bad RV combination (422) and a foreign composite (410) before asking anyone', () => {
    const bad = planList({
      query: new URLSearchParams('resourceVersionMatch=Exact'),
      targets,
      membership,
      plainNameCluster: undefined,
    });
    expect('code' in bad && bad.code).toBe(422);
    const other = encodeComposite(prepareMembership(['karmada', 'east']), rvs({ karmada: '1', east: '2' }));
    const foreign = planList({
      query: new URLSearchParams({ resourceVersion: other }),
      targets,
      membership,
      plainNameCluster: undefined,
    });
    expect('code' in foreign && foreign.code).toBe(410);
  });

  it('asks only the clusters the selectors choose, with the fleet parts removed', () => {
    const p = plan(
      `labelSelector=${encodeURIComponent(`${CLUSTER_LABEL}!=karmada,app=web`)}&fieldSelector=${encodeURIComponent('metadata.name!=a.clusterspace.west')}`,
    );
    expect(queries(p)).toEqual({
      east: 'labelSelector=app%3Dweb',
      west: 'labelSelector=app%3Dweb&fieldSelector=metadata.name%21%3Da',
    });
  });

  it('probes one cluster for the kind when nothing is chosen, with a selector nothing matches', () => {
    const p = plan(`labelSelector=${encodeURIComponent(`${CLUSTER_LABEL}=nowhere`)}&limit=5`);
    expect(p.emptyProbe).toBe(true);
    expect(p.asks.map((a) => a.target.cluster)).toEqual(['karmada']);
    expect(p.queryFor(p.asks[0]!).get('labelSelector')).toBe(MATCHES_NOTHING);
    expect(p.queryFor(p.asks[0]!).has('limit')).toBe(false);
  });

  it('answers a bad selector with a 400 Status', () => {
    const r = planList({
      query: new URLSearchParams('labelSelector=a%20in%20('),
      targets,
      membership,
      plainNameCluster: undefined,
    });
    expect('code' in r && r.code).toBe(400);
  });
});

describe('planList: continue across clusters', () => {
  const seen = rvs({ karmada: '10', east: '200', west: '3000' });

  it('resumes the cluster it stopped in from its upstream token; the later ones at the first page RV', () => {
    const token = encodeContinue(membership, 'east', 'UPSTREAM', seen);
    const p = plan(`continue=${token}&limit=2`);
    // karmada comes before east in fleet order: done
    expect(p.asks.map((a) => a.target.cluster)).toEqual(['east', 'west']);
    expect(queries(p)).toEqual({
      east: 'continue=UPSTREAM&limit=2',
      west: 'resourceVersion=3000&resourceVersionMatch=Exact&limit=2',
    });
    expect(p.asks[0]!.askedWith).toBe('UPSTREAM');
    expect(p.asks[1]!.askedWith).toBe('');
    // the merged page encodes its next token from these
    expect(p.rvs.get('west')).toBe('3000');
  });

  it('without an upstream token re-reads the cluster at its RV and skips what was returned', () => {
    const token = encodeContinue(membership, 'karmada', '', seen, 3);
    const p = plan(`continue=${token}&limit=2`);
    expect(p.asks.map((a) => [a.target.cluster, a.skip, a.limit])).toEqual([
      ['karmada', 3, 5],
      ['east', 0, 2],
      ['west', 0, 2],
    ]);
    expect(p.queryFor(p.asks[0]!).toString()).toBe('resourceVersion=10&resourceVersionMatch=Exact&limit=5');
  });

  it('does not send the client token or resourceVersion upstream', () => {
    const token = encodeContinue(membership, 'west', 'W', seen);
    const p = plan(`continue=${token}&resourceVersion=99&limit=7`);
    const q = p.queryFor(p.asks[0]!);
    expect(q.getAll('continue')).toEqual(['W']);
    expect(q.has('resourceVersion')).toBe(false);
    expect(q.get('limit')).toBe('7');
  });

  it('refuses a token of another membership (410) and garbage (400)', () => {
    const old = encodeContinue(
      prepareMembership(['karmada', 'east']),
      'east',
      'x',
      rvs({ karmada: '1', east: '2' }),
    );
    for (const [token, code] of [
      [old, 410],
      ['not-a-token', 400],
    ] as const) {
      const r = planList({
        query: new URLSearchParams({ continue: token }),
        targets,
        membership,
        plainNameCluster: undefined,
      });
      expect('code' in r && r.code).toBe(code);
    }
  });
});

describe('listLimit', () => {
  it('reads a decimal count and ignores anything else', () => {
    expect(listLimit('500')).toBe(500);
    for (const v of [null, '', '-1', '1.5', 'abc', '0x10']) expect(listLimit(v)).toBe(0);
  });
});
