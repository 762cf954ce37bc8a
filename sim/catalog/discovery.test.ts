import { describe, expect, it } from 'vitest';
import { buildCatalog } from './index.ts';
import aggregatedV2 from './testdata/aggregated_v2.json' with { type: 'json' };
import api from './testdata/api.json' with { type: 'json' };
import apiV1 from './testdata/api__v1.json' with { type: 'json' };
import apis from './testdata/apis.json' with { type: 'json' };
import apisApps from './testdata/apis__apps.json' with { type: 'json' };
import apisAppsV1 from './testdata/apis__apps__v1.json' with { type: 'json' };
import apisBatchV1 from './testdata/apis__batch__v1.json' with { type: 'json' };

const member = buildCatalog({ role: 'member', crds: false, kubernetesVersion: 'v1.35.0' });
const withCrds = buildCatalog({ role: 'member', crds: true, kubernetesVersion: 'v1.35.0' });
const karmada = buildCatalog({ role: 'karmada', crds: false, kubernetesVersion: 'v1.34.1' });

describe('discovery matches real kube-apiserver documents', () => {
  it('/api', () => expect(member.legacyApi()).toEqual(api));
  it('/api/v1', () => expect(member.apiResourceList('', 'v1')).toEqual(apiV1));
  it('/apis', () => expect(member.apiGroupList()).toEqual(apis));
  it('/apis/apps', () => expect(member.apiGroup('apps')).toEqual(apisApps));
  it('/apis/apps/v1', () => expect(member.apiResourceList('apps', 'v1')).toEqual(apisAppsV1));
  it('/apis/batch/v1', () => expect(member.apiResourceList('batch', 'v1')).toEqual(apisBatchV1));
  it('aggregated /apis (v2)', () => expect(member.aggregated('apis', 'v2')).toEqual(aggregatedV2));

  it('aggregated v2beta1 differs from v2 only in apiVersion', () => {
    const beta = member.aggregated('apis', 'v2beta1') as Record<string, unknown>;
    expect(beta.apiVersion).toBe('apidiscovery.k8s.io/v2beta1');
    expect({ ...beta, apiVersion: 'apidiscovery.k8s.io/v2' }).toEqual(aggregatedV2);
  });

  it('aggregated /api has the single core group, consistent with /api/v1', () => {
    const legacy = member.aggregated('legacy', 'v2') as any;
    expect(legacy.kind).toBe('APIGroupDiscoveryList');
    expect(legacy.items).toHaveLength(1);
    expect(legacy.items[0].metadata).toEqual({});
    const v1 = legacy.items[0].versions[0];
    expect(v1.version).toBe('v1');
    expect(v1.freshness).toBe('Current');
    const top = apiV1.resources.filter((r) => !r.name.includes('/'));
    expect(v1.resources.map((r: any) => r.resource)).toEqual(top.map((r) => r.name));
    const pods = v1.resources.find((r: any) => r.resource === 'pods');
    expect(pods.scope).toBe('Namespaced');
    expect(pods.subresources.map((s: any) => s.subresource)).toEqual([
      'attach',
      'binding',
      'checkpoint',
      'ephemeralcontainers',
      'eviction',
      'exec',
      'log',
      'portforward',
      'proxy',
      'status',
    ]);
    expect(pods.subresources.find((s: any) => s.subresource === 'eviction').responseKind).toEqual({
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
    });
  });

  it('unknown groups and versions are undefined (404)', () => {
    expect(member.apiGroup('nope.example.com')).toBeUndefined();
    expect(member.apiResourceList('apps', 'v1beta1')).toBeUndefined();
    expect(member.apiGroup('cluster.karmada.io')).toBeUndefined();
    expect(member.find('example.fleet.io', 'v1', 'widgets')).toBeUndefined();
  });

  it('returns copies: callers may change documents', () => {
    const a = member.apiGroupList() as any;
    a.groups.length = 0;
    expect(member.apiGroupList()).toEqual(apis);
  });
});

describe('role and crds', () => {
  it('karmada serves the Karmada groups after the built-in ones, and keeps core and apps', () => {
    const names = (karmada.apiGroupList() as any).groups.map((g: any) => g.name);
    expect(names.slice(-3)).toEqual(['cluster.karmada.io', 'policy.karmada.io', 'work.karmada.io']);
    expect(karmada.find('', 'v1', 'pods')).toBeDefined();
    expect(karmada.find('apps', 'v1', 'deployments')).toBeDefined();
    const clusters = karmada.find('cluster.karmada.io', 'v1alpha1', 'clusters')!;
    expect(clusters.namespaced).toBe(false);
    expect(clusters.kind).toBe('Cluster');
    expect(clusters.subresources?.map((s) => s.name)).toEqual(['proxy', 'status']);
    expect(karmada.find('policy.karmada.io', 'v1alpha1', 'propagationpolicies')?.shortNames).toEqual(['pp']);
    expect(karmada.find('work.karmada.io', 'v1alpha2', 'resourcebindings')).toBeDefined();
    expect(karmada.find('work.karmada.io', 'v1alpha1', 'works')).toBeDefined();
    expect(karmada.apiGroup('work.karmada.io')).toEqual({
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'work.karmada.io',
      versions: [
        { groupVersion: 'work.karmada.io/v1alpha2', version: 'v1alpha2' },
        { groupVersion: 'work.karmada.io/v1alpha1', version: 'v1alpha1' },
      ],
      preferredVersion: { groupVersion: 'work.karmada.io/v1alpha2', version: 'v1alpha2' },
    });
  });

  it('crds adds the Widget kind', () => {
    const w = withCrds.find('example.fleet.io', 'v1', 'widgets')!;
    expect(w).toMatchObject({ kind: 'Widget', namespaced: true, shortNames: ['wd'], custom: true });
    const list = withCrds.apiResourceList('example.fleet.io', 'v1') as any;
    expect(list.resources.map((r: any) => r.name)).toEqual(['widgets', 'widgets/status']);
    const agg = withCrds.aggregated('apis', 'v2') as any;
    expect(agg.items.at(-1).metadata.name).toBe('example.fleet.io');
  });

  it('version() follows kubernetesVersion', () => {
    expect(member.version()).toMatchObject({
      major: '1',
      minor: '35',
      gitVersion: 'v1.35.0',
      platform: 'linux/amd64',
    });
    const old = buildCatalog({ role: 'member', crds: false, kubernetesVersion: 'v1.29.3' }).version();
    expect(old).toMatchObject({
      major: '1',
      minor: '29',
      gitVersion: 'v1.29.3',
      gitTreeState: 'clean',
      compiler: 'gc',
    });
    expect(old.emulationMinor).toBeUndefined();
    for (const k of ['gitCommit', 'buildDate', 'goVersion']) expect(old[k]).toBeTruthy();
  });
});
