import { describe, expect, it } from 'vitest';
import { CLUSTER_LABEL } from '../kube/selectors.ts';
import { type ClusterChoice, chooseClusters, isElectionLock, MATCHES_NOTHING } from './targets.ts';

const targets = ['karmada', 'east', 'west'].map((cluster) => ({ cluster }));

function choose(
  labelSelector: string | null,
  fieldSelector: string | null,
  plainNameCluster?: string,
): ClusterChoice<{ cluster: string }> {
  const r = chooseClusters({ labelSelector, fieldSelector, targets, plainNameCluster });
  if ('code' in r) throw new Error(`unexpected Status ${r.code}: ${r.message}`);
  return r;
}

const names = (c: ClusterChoice<{ cluster: string }>) => c.chosen.map((t) => t.cluster);

describe('chooseClusters', () => {
  it('asks every cluster when no selector names the fleet', () => {
    const c = choose('app=web', 'status.phase=Running');
    expect(names(c)).toEqual(['karmada', 'east', 'west']);
    expect(c.labelForward).toBe('app=web');
    expect(c.fieldFor('east')).toBe('status.phase=Running');
  });

  it('chooses clusters by the cluster label and never forwards it', () => {
    const c = choose(`${CLUSTER_LABEL} in (east,west),app=web`, null);
    expect(names(c)).toEqual(['east', 'west']);
    expect(c.labelForward).toBe('app=web');
    expect(names(choose(`${CLUSTER_LABEL}!=east`, null))).toEqual(['karmada', 'west']);
    expect(names(choose(`${CLUSTER_LABEL}=nowhere`, null))).toEqual([]);
    expect(choose(`${CLUSTER_LABEL}=east`, null).labelForward).toBe('');
  });

  it('pins the cluster of a fleet name and sends the plain name', () => {
    const c = choose(null, 'metadata.name=web.clusterspace.west');
    expect(names(c)).toEqual(['west']);
    expect(c.fieldFor('west')).toBe('metadata.name=web');
  });

  it('applies a != on a fleet name to its own cluster only', () => {
    const c = choose(null, 'metadata.name!=web.clusterspace.west,status.phase=Running');
    expect(names(c)).toEqual(['karmada', 'east', 'west']);
    expect(c.fieldFor('west')).toBe('metadata.name!=web,status.phase=Running');
    expect(c.fieldFor('east')).toBe('status.phase=Running');
  });

  it('reads a plain name as the plain-name cluster when there is one', () => {
    expect(names(choose(null, 'metadata.name=web', 'karmada'))).toEqual(['karmada']);
    // no plain-name cluster: the plain name is looked for everywhere, as sent
    const c = choose(null, 'metadata.name=web');
    expect(names(c)).toEqual(['karmada', 'east', 'west']);
    expect(c.fieldFor('east')).toBe('metadata.name=web');
  });

  it('chooses nothing when the terms pin two clusters or label and field disagree', () => {
    const twice = choose(null, 'metadata.name=a.clusterspace.east,involvedObject.name=b.clusterspace.west');
    expect(names(twice)).toEqual([]);
    expect(twice.fieldFor('east')).toBe('');
    expect(names(choose(`${CLUSTER_LABEL}=east`, 'metadata.name=a.clusterspace.west'))).toEqual([]);
  });

  it('keeps the order and identity of the targets it is given', () => {
    const c = chooseClusters({
      labelSelector: null,
      fieldSelector: null,
      targets,
      plainNameCluster: undefined,
    });
    expect('code' in c ? [] : c.chosen[0]).toBe(targets[0]);
  });

  it('answers a 400 Status for a selector that does not parse, never throws', () => {
    for (const [label, field] of [
      ['app in (web', null],
      [null, 'metadata.name'],
      [`${CLUSTER_LABEL} in (`, null],
    ] as const) {
      const r = chooseClusters({
        labelSelector: label,
        fieldSelector: field,
        targets,
        plainNameCluster: undefined,
      });
      expect('code' in r && r.code).toBe(400);
      expect('code' in r && r.reason).toBe('BadRequest');
    }
  });

  it('has a label selector nothing matches for kind-only probes', () => {
    expect(MATCHES_NOTHING).toBe(`${CLUSTER_LABEL},!${CLUSTER_LABEL}`);
  });
});

describe('isElectionLock', () => {
  it('Leases and LeaseCandidates of coordination.k8s.io, nothing else', () => {
    expect(isElectionLock({ apiGroup: 'coordination.k8s.io', resource: 'leases' })).toBe(true);
    expect(isElectionLock({ apiGroup: 'coordination.k8s.io', resource: 'leasecandidates' })).toBe(true);
    for (const [apiGroup, resource] of [
      ['', 'configmaps'],
      ['', 'leases'],
      ['coordination.example.io', 'leases'],
      ['coordination.k8s.io', 'other'],
    ] as const)
      expect(isElectionLock({ apiGroup, resource })).toBe(false);
  });
});
