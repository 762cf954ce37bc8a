import { describe, expect, it } from 'vitest';
import { encodeComposite, prepareMembership } from '../merge/rv/index.ts';
import { type OwnerRequest, ownerAmong, ownerOf, ownerQuery, plainNameClusterFor } from './owner.ts';

const targets = ['karmada', 'east', 'west'].map((cluster) => ({ cluster }));
const on = { federation: true };
const off = { federation: false };
const pods = (name: string, clusterspace?: string): OwnerRequest => ({
  name,
  clusterspace,
  resource: 'pods',
  apiGroup: '',
});

describe('plainNameClusterFor', () => {
  it('is the one cluster of a single-cluster clusterspace, the control plane with federation, else none', () => {
    expect(plainNameClusterFor(off, 'east', [{ cluster: 'east' }])).toBe('east');
    expect(plainNameClusterFor(on, undefined, targets)).toBe('karmada');
    expect(plainNameClusterFor(on, 'all', targets)).toBe('karmada');
    expect(plainNameClusterFor(off, 'all', targets)).toBeUndefined();
  });
});

describe('ownerOf', () => {
  it('sends a fleet name to its cluster with the plain name', () => {
    const o = ownerOf(off, pods('web.clusterspace.west'), targets, undefined);
    expect(o).toEqual({ target: targets[2], plain: 'web', fleet: 'web.clusterspace.west' });
  });

  it('sends a plain name to the plain-name cluster, or searches when there is none', () => {
    expect(ownerOf(on, pods('web'), targets, 'karmada')).toMatchObject({ target: targets[0], plain: 'web' });
    expect(ownerOf(off, pods('web'), targets, undefined)).toEqual({ search: true, plain: 'web' });
  });

  it('answers 404 for a cluster outside the fleet and 400 when the name contradicts the clusterspace', () => {
    const nowhere = ownerOf(off, pods('web.clusterspace.north'), targets, undefined);
    expect('code' in nowhere && nowhere.code).toBe(404);
    const contradicts = ownerOf(off, pods('web.clusterspace.west', 'east'), [targets[1]!], 'east');
    expect('code' in contradicts && [contradicts.code, contradicts.reason]).toEqual([400, 'BadRequest']);
  });
});

describe('ownerAmong: a plain name found in 0, 1 or several clusters', () => {
  it('one hit is the owner', () => {
    expect(ownerAmong(off, pods('web'), 'web', [targets[1]!], [])).toEqual({
      target: targets[1],
      plain: 'web',
      fleet: 'web.clusterspace.east',
    });
  });

  it('no hit is a 404 naming the clusters that could not be asked', () => {
    const s = ownerAmong(off, pods('web'), 'web', [], ['west']);
    expect('code' in s && s.code).toBe(404);
    expect('code' in s && s.message).toContain('clusters not reachable: west');
    const quiet = ownerAmong(off, pods('web'), 'web', [], []);
    expect('code' in quiet && quiet.message).not.toContain('reachable');
  });

  it('several hits are a 409 Conflict listing the fleet name of each', () => {
    const s = ownerAmong(off, pods('web'), 'web', [targets[1]!, targets[2]!], []);
    expect('code' in s && [s.code, s.reason]).toEqual([409, 'Conflict']);
    if (!('code' in s)) return;
    expect(s.details?.causes?.map((c) => c.message)).toEqual([
      'web.clusterspace.east',
      'web.clusterspace.west',
    ]);
    expect(s.message).toContain('web.clusterspace.east, web.clusterspace.west');
  });
});

describe('ownerQuery', () => {
  const membership = prepareMembership(['karmada', 'east', 'west']).names;

  it("turns a composite resourceVersion into the owning cluster's own, keeping the rest", () => {
    const rv = encodeComposite(membership, new Map([['east', '42']]));
    const q = ownerQuery(new URLSearchParams({ resourceVersion: rv, pretty: 'true' }), membership, 'east');
    expect('code' in q ? q : q.toString()).toBe('resourceVersion=42&pretty=true');
    expect(ownerQuery(new URLSearchParams('resourceVersion=0'), membership, 'east').toString()).toBe(
      'resourceVersion=0',
    );
  });

  it('refuses a composite without a version for that cluster, or no composite at all (400)', () => {
    const rv = encodeComposite(membership, new Map([['east', '42']]));
    for (const v of [rv, '12345']) {
      const q = ownerQuery(
        new URLSearchParams({ resourceVersion: v }),
        membership,
        v === rv ? 'west' : 'east',
      );
      expect('code' in q && q.code).toBe(400);
    }
  });
});
