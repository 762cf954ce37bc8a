import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type {
  APIGroup,
  APIGroupDiscoveryList,
  APIGroupList,
  APIResource,
  APIResourceList,
} from '../kube/discovery.ts';
import { mergeAggregated } from './discovery.ts';
import {
  legacyGroupDoc,
  legacyGroupList,
  legacyResourceList,
  legacyVersions,
  markStale,
} from './lastknown.ts';

// real kube-apiserver documents (kubernetes/kubernetes api/discovery/), kept with the simulated catalog
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../sim/catalog/testdata/${name}`, import.meta.url), 'utf8'));
const AGG: APIGroupDiscoveryList = fixture('aggregated_v2.json');
const APIS: APIGroupList = fixture('apis.json');
const APPS: APIGroup = fixture('apis__apps.json');
const APPS_V1: APIResourceList = fixture('apis__apps__v1.json');

/** a legacy resource as the conversion can know it (aggregated discovery has no storageVersionHash) */
const comparable = ({ storageVersionHash: _h, ...r }: APIResource) => r;
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

describe('a cluster’s discovery as last seen', () => {
  it('aggregated: every version marked Stale, on a copy', () => {
    const stale = markStale(AGG.items);
    expect(stale).toHaveLength(AGG.items.length);
    for (const g of stale) for (const v of g.versions ?? []) expect(v.freshness).toBe('Stale');
    // the kept document is untouched
    expect(AGG.items.flatMap((g) => g.versions ?? []).every((v) => v.freshness !== 'Stale')).toBe(true);
    // resources carried as they were
    expect(stale.map((g) => g.versions?.map((v) => v.resources))).toEqual(
      AGG.items.map((g) => g.versions?.map((v) => v.resources)),
    );
  });

  it('merged: a version only the unreachable cluster had is Stale; one a reachable cluster serves is not', () => {
    const widgets = {
      metadata: { name: 'example.fleet.io' },
      versions: [{ version: 'v1', resources: [], freshness: 'Current' }],
    };
    const apps = AGG.items.find((g) => g.metadata?.name === 'apps')!;
    const m = mergeAggregated(
      [
        { cluster: 'member1', doc: { items: [apps] } },
        { cluster: 'member2', doc: { items: markStale([apps, widgets]) } },
      ],
      'v2',
    );
    const fresh = (name: string) =>
      m.items.find((g) => g.metadata?.name === name)!.versions!.map((v) => v.freshness);
    expect(fresh('apps')).toEqual(apps.versions!.map(() => 'Current'));
    expect(fresh('example.fleet.io')).toEqual(['Stale']);
  });

  it('legacy /apis and /apis/<g> from the kept aggregated document equal kube-apiserver’s own', () => {
    const groups = legacyGroupList(AGG.items);
    expect(groups.kind).toBe('APIGroupList');
    const strip = (g: APIGroup) => ({
      name: g.name,
      versions: g.versions,
      preferredVersion: g.preferredVersion,
    });
    expect(groups.groups.map(strip)).toEqual(APIS.groups.map(strip));
    expect(strip(legacyGroupDoc(AGG.items, 'apps')!)).toEqual(strip(APPS));
    expect(legacyGroupDoc(AGG.items, 'apps')).toMatchObject({ kind: 'APIGroup', apiVersion: 'v1' });
    expect(legacyGroupDoc(AGG.items, 'nope.example.io')).toBeUndefined();
  });

  it('legacy /apis/<g>/<v> from the kept aggregated document equals kube-apiserver’s own', () => {
    const list = legacyResourceList(AGG.items, 'apps', 'v1')!;
    expect(list).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'apps/v1' });
    // subresources become `resource/subresource` entries; scale names its own group and version
    expect([...list.resources].sort(byName)).toEqual(APPS_V1.resources.map(comparable).sort(byName));
    expect(list.resources.find((r) => r.name === 'deployments/scale')).toMatchObject({
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
    });
    expect(legacyResourceList(AGG.items, 'apps', 'v9')).toBeUndefined();
    expect(legacyResourceList(AGG.items, 'nope.example.io', 'v1')).toBeUndefined();
  });

  it('legacy /api from the kept /api document: the core versions', () => {
    const core = { metadata: {}, versions: [{ version: 'v1', resources: [] }] };
    expect(legacyVersions([core])).toEqual({ kind: 'APIVersions', versions: ['v1'] });
    expect(legacyVersions([])).toEqual({ kind: 'APIVersions', versions: [] });
  });
});
