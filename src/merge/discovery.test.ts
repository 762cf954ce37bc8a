import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AGGREGATED_UPSTREAM_ACCEPT,
  type APIGroupDiscovery,
  type APIGroupDiscoveryList,
  type APIGroupList,
  type APIResourceList,
  aggregatedContentType,
  aggregatedVersionOf,
  compareKubeAwareVersions,
  discoveryETag,
  etagMatches,
  negotiateDiscovery,
  sortByVersionPriority,
} from '../kube/discovery.ts';
import { parseAccept } from '../kube/negotiate.ts';
import {
  aggregatedFromLegacy,
  consensusOrder,
  mergeAggregated,
  mergeAPIGroup,
  mergeAPIGroupList,
  mergeAPIResourceList,
  mergeAPIVersions,
  mergeGroupVersions,
} from './discovery.ts';
import { mergeOpenAPIV3Roots, openAPIClustersFor } from './openapi.ts';

// real kube-apiserver documents (kubernetes/kubernetes api/discovery/), kept with the simulated catalog
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../sim/catalog/testdata/${name}`, import.meta.url), 'utf8'));
const AGG: APIGroupDiscoveryList = fixture('aggregated_v2.json');
const APIS: APIGroupList = fixture('apis.json');
const CORE_V1: APIResourceList = fixture('api__v1.json');

const KUBECTL_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

/** is `sub` a subsequence of `seq` (same relative order)? */
function isSubsequence(sub: readonly string[], seq: readonly string[]): boolean {
  let i = 0;
  for (const x of seq) if (x === sub[i]) i++;
  return i === sub.length;
}

describe('compareKubeAwareVersions (apimachinery CompareKubeAwareVersionStrings)', () => {
  it('orders GA > beta > alpha, then by number; kube-like versions before others', () => {
    const want = [
      'v10',
      'v2',
      'v1',
      'v11beta2',
      'v10beta3',
      'v3beta1',
      'v12alpha1',
      'v11alpha2',
      'foo1',
      'foo10',
    ];
    expect(sortByVersionPriority([...want].reverse())).toEqual(want);
    expect(compareKubeAwareVersions('v1', 'v1')).toBe(0);
    expect(compareKubeAwareVersions('v2', 'v1')).toBeGreaterThan(0);
    expect(compareKubeAwareVersions('v1beta1', 'v1')).toBeLessThan(0);
    expect(compareKubeAwareVersions('v1alpha1', 'v1beta1')).toBeLessThan(0);
    // not kube-like: reverse lexical; and any kube-like version outranks them
    expect(compareKubeAwareVersions('a', 'b')).toBeGreaterThan(0);
    expect(compareKubeAwareVersions('v1gamma1', 'v1alpha1')).toBeLessThan(0);
    // beyond int64 strconv.Atoi fails: not kube-like
    expect(compareKubeAwareVersions('v99999999999999999999', 'v1alpha1')).toBeLessThan(0);
  });

  it('is antisymmetric and transitive', () => {
    const ver = fc.oneof(
      fc
        .tuple(fc.nat(30), fc.constantFrom('', 'alpha', 'beta'), fc.nat(30))
        .map(([a, t, b]) => (t ? `v${a}${t}${b}` : `v${a}`)),
      fc.stringMatching(/^[a-z0-9]{1,6}$/),
    );
    let chains = 0;
    fc.assert(
      fc.property(ver, ver, ver, (a, b, c) => {
        expect(Math.sign(compareKubeAwareVersions(a, b)) + Math.sign(compareKubeAwareVersions(b, a))).toBe(0);
        if (compareKubeAwareVersions(a, b) > 0 && compareKubeAwareVersions(b, c) > 0) {
          chains++;
          expect(compareKubeAwareVersions(a, c)).toBeGreaterThan(0);
        }
      }),
      { numRuns: 2000 },
    );
    // transitivity was checked on real chains, not only vacuously
    expect(chains).toBeGreaterThan(100);
  });
});

describe('consensusOrder', () => {
  const lexical = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  /** lists that are all subsequences of one hidden order */
  const consistentLists = fc
    .uniqueArray(fc.stringMatching(/^[a-z]{1,4}$/), { minLength: 0, maxLength: 25 })
    .chain((order) =>
      fc.record({
        order: fc.constant(order),
        lists: fc.array(fc.subarray(order), { minLength: 1, maxLength: 5 }),
      }),
    );

  it('is a permutation of the union that respects every list, when the lists agree', () => {
    fc.assert(
      fc.property(consistentLists, ({ lists }) => {
        const out = consensusOrder(lists, lexical);
        expect(new Set(out).size).toBe(out.length);
        expect(new Set(out)).toEqual(new Set(lists.flat()));
        for (const l of lists) expect(isSubsequence(l, out)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('returns a list that holds everything as it is (kube-apiserver’s shortcut)', () => {
    fc.assert(
      fc.property(consistentLists, ({ order, lists }) => {
        expect(consensusOrder([...lists, order], lexical)).toEqual(order);
      }),
    );
    // even when another list disagrees with it
    expect(
      consensusOrder(
        [
          ['b', 'a'],
          ['a', 'b', 'c'],
        ],
        lexical,
      ),
    ).toEqual(['a', 'b', 'c']);
  });

  it('places an entry only some lists know between the neighbours they give it', () => {
    expect(
      consensusOrder(
        [
          ['apps', 'batch', 'policy'],
          ['apps', 'batch', 'example.io', 'policy'],
        ],
        lexical,
      ),
    ).toEqual(['apps', 'batch', 'example.io', 'policy']);
    // unordered relative to each other: the tie-break decides
    expect(consensusOrder([['b'], ['a']], lexical)).toEqual(['a', 'b']);
  });

  it('stays total and deterministic when the lists contradict each other', () => {
    const lists = fc.array(fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { maxLength: 6 }), {
      maxLength: 5,
    });
    fc.assert(
      fc.property(lists, (ls) => {
        const out = consensusOrder(ls, lexical);
        expect(new Set(out)).toEqual(new Set(ls.flat()));
        expect(out.length).toBe(new Set(ls.flat()).size);
        expect(consensusOrder(ls, lexical)).toEqual(out);
      }),
    );
  });
});

describe('mergeGroupVersions: preferred version', () => {
  it.each([
    // [each serving cluster's versions in its priority order] → [merged, preferred first]
    [[['v1']], ['v1']],
    [
      [['v2', 'v1'], ['v1']],
      ['v1', 'v2'],
    ], // v1 reaches every cluster; v2 does not
    [
      [
        ['v2', 'v1'],
        ['v2', 'v1'],
      ],
      ['v2', 'v1'],
    ],
    [
      [['v1beta1'], ['v1']],
      ['v1', 'v1beta1'],
    ], // nothing in common: highest priority
    [
      [
        ['v1', 'v1beta1'],
        ['v1beta1', 'v1alpha1'],
      ],
      ['v1beta1', 'v1', 'v1alpha1'],
    ],
    [
      [['v1alpha1'], ['v2beta1'], ['v1']],
      ['v1', 'v2beta1', 'v1alpha1'],
    ],
    [
      [['v1beta1', 'v1'], ['v1']],
      ['v1', 'v1beta1'],
    ], // the cluster's own priority (CRD) kept… unless not common
    [[['v1beta1', 'v1']], ['v1beta1', 'v1']], // a single cluster's order is kept as is
  ])('%j → %j', (perCluster, want) => {
    const { versions, preferred } = mergeGroupVersions(perCluster);
    expect(versions).toEqual(want);
    expect(preferred).toBe(want[0]);
  });

  it('always picks a version every serving cluster has, when there is one', () => {
    const ver = fc.constantFrom('v1', 'v2', 'v1beta1', 'v1beta2', 'v1alpha1', 'v3alpha1');
    fc.assert(
      fc.property(
        fc.array(fc.uniqueArray(ver, { minLength: 1 }), { minLength: 1, maxLength: 5 }),
        (lists) => {
          const sorted = lists.map(sortByVersionPriority);
          const { versions, preferred } = mergeGroupVersions(sorted);
          const common = sorted[0]!.filter((v) => sorted.every((l) => l.includes(v)));
          if (common.length) expect(preferred).toBe(sortByVersionPriority(common)[0]);
          else expect(preferred).toBe(sortByVersionPriority(lists.flat())[0]);
          expect(new Set(versions)).toEqual(new Set(lists.flat()));
          expect(versions[0]).toBe(preferred);
        },
      ),
    );
  });
});

describe('legacy documents', () => {
  it('/api: union of versions; serverAddressByClientCIDRs names the fleet only', () => {
    const m = mergeAPIVersions(
      [
        {
          cluster: 'a',
          doc: {
            kind: 'APIVersions',
            versions: ['v1'],
            serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }],
          },
        },
        { cluster: 'b', doc: { kind: 'APIVersions', versions: ['v1'] } },
      ],
      [{ clientCIDR: '0.0.0.0/0', serverAddress: 'fleet:443' }],
    );
    expect(m).toEqual({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: 'fleet:443' }],
    });
  });

  it('/apis: a group only one cluster serves appears; versions unioned with a common preferred version', () => {
    const a: APIGroupList = {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        {
          name: 'apps',
          versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
        },
        {
          name: 'autoscaling',
          versions: [
            { groupVersion: 'autoscaling/v2', version: 'v2' },
            { groupVersion: 'autoscaling/v1', version: 'v1' },
          ],
          preferredVersion: { groupVersion: 'autoscaling/v2', version: 'v2' },
        },
      ],
    };
    const b: APIGroupList = {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        a.groups[0]!,
        {
          name: 'example.fleet.io',
          versions: [{ groupVersion: 'example.fleet.io/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'example.fleet.io/v1', version: 'v1' },
        },
        {
          name: 'autoscaling',
          versions: [{ groupVersion: 'autoscaling/v1', version: 'v1' }],
          preferredVersion: { groupVersion: 'autoscaling/v1', version: 'v1' },
          serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.2:6443' }],
        },
      ],
    };
    const m = mergeAPIGroupList([
      { cluster: 'a', doc: a },
      { cluster: 'b', doc: b },
    ]);
    expect(m.groups.map((g) => g.name)).toEqual(['apps', 'example.fleet.io', 'autoscaling']);
    const autoscaling = m.groups[2]!;
    expect(autoscaling.versions.map((v) => v.groupVersion)).toEqual(['autoscaling/v1', 'autoscaling/v2']);
    expect(autoscaling.preferredVersion).toEqual({ groupVersion: 'autoscaling/v1', version: 'v1' });
    expect(JSON.stringify(m)).not.toContain('10.0.0');
  });

  it('/apis of the real kube-apiserver document, split across clusters, merges back to it', () => {
    const split = fc.array(fc.subarray(APIS.groups.map((g) => g.name)), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(split, (parts) => {
        // one cluster serves every group: its order is the answer
        const docs = [APIS.groups.map((g) => g.name), ...parts].map((names, i) => ({
          cluster: `c${i}`,
          doc: { ...APIS, groups: APIS.groups.filter((g) => names.includes(g.name)) },
        }));
        expect(mergeAPIGroupList(docs.reverse().reverse())).toEqual(APIS);
        // without it: every group still there, each cluster's order respected
        const m = mergeAPIGroupList(docs.slice(1));
        const names = m.groups.map((g) => g.name);
        expect(new Set(names)).toEqual(new Set(parts.flat()));
        for (const p of parts) expect(isSubsequence(p, names)).toBe(true);
      }),
    );
  });

  it('/apis/<g>: merged from the clusters that serve it', () => {
    const g = (versions: string[]) => ({
      kind: 'APIGroup' as const,
      apiVersion: 'v1',
      name: 'flowcontrol.apiserver.k8s.io',
      versions: versions.map((v) => ({ groupVersion: `flowcontrol.apiserver.k8s.io/${v}`, version: v })),
      preferredVersion: {
        groupVersion: `flowcontrol.apiserver.k8s.io/${versions[0]}`,
        version: versions[0]!,
      },
    });
    expect(mergeAPIGroup([])).toBeUndefined();
    expect(
      mergeAPIGroup([
        { cluster: 'old', doc: g(['v1', 'v1beta3']) },
        { cluster: 'new', doc: g(['v1']) },
      ]),
    ).toEqual(g(['v1', 'v1beta3']));
  });

  it('/api/v1: every resource once, the first cluster (fleet order) winning its details', () => {
    const noCheckpoint = {
      ...CORE_V1,
      resources: CORE_V1.resources.filter((r) => r.name !== 'pods/checkpoint'),
    };
    const otherVerbs = {
      ...CORE_V1,
      resources: CORE_V1.resources.map((r) => (r.name === 'pods' ? { ...r, verbs: ['get'] } : r)),
    };
    const m = mergeAPIResourceList([
      { cluster: 'karmada', doc: noCheckpoint },
      { cluster: 'member1', doc: otherVerbs },
    ])!;
    expect(m).toEqual(CORE_V1); // pods/checkpoint comes from member1, in its place; pods' verbs from karmada
    expect(mergeAPIResourceList([])).toBeUndefined();
  });
});

describe('aggregated discovery', () => {
  /** The fixture cut down for one cluster: keep the listed groups (all versions) and resources. */
  function cut(
    groups: Set<string>,
    keep: (group: string, resource: string) => boolean,
  ): APIGroupDiscoveryList {
    return {
      ...AGG,
      items: AGG.items
        .filter((g) => groups.has(g.metadata!.name!))
        .map((g) => ({
          ...g,
          versions: g.versions!.map((v) => ({
            ...v,
            resources: v.resources!.filter((r) => keep(g.metadata!.name!, r.resource)),
          })),
        })),
    };
  }

  it('merging the real document with itself gives it back (v2 and v2beta1)', () => {
    const docs = [
      { cluster: 'a', doc: AGG },
      { cluster: 'b', doc: { ...AGG, apiVersion: 'apidiscovery.k8s.io/v2beta1' } },
    ];
    expect(mergeAggregated(docs, 'v2')).toEqual(AGG);
    expect(mergeAggregated(docs, 'v2beta1')).toEqual({ ...AGG, apiVersion: 'apidiscovery.k8s.io/v2beta1' });
  });

  it('resources and groups split across clusters merge back to the whole document', () => {
    const all = AGG.items.map((g) => g.metadata!.name!);
    const pairs = [
      ...new Set(
        AGG.items.flatMap((g) =>
          g.versions!.flatMap((v) => v.resources!.map((r) => `${g.metadata!.name}/${r.resource}`)),
        ),
      ),
    ];
    const split = fc.integer({ min: 1, max: 4 }).chain((n) =>
      fc.record({
        n: fc.constant(n),
        // which clusters serve each group (at least one), and which of those serve each of its resources
        groupOwners: fc.array(fc.subarray([...Array(n).keys()], { minLength: 1 }), {
          minLength: all.length,
          maxLength: all.length,
        }),
        resourceMasks: fc.array(fc.nat(15), { minLength: pairs.length, maxLength: pairs.length }),
      }),
    );
    fc.assert(
      fc.property(split, ({ n, groupOwners, resourceMasks }) => {
        const owners = (group: string, resource: string): number[] => {
          const g = groupOwners[all.indexOf(group)]!;
          const mask = resourceMasks[pairs.indexOf(`${group}/${resource}`)]!;
          const some = g.filter((_, k) => (mask >> k) & 1);
          return some.length ? some : [g[0]!];
        };
        const docs = [...Array(n).keys()].map((c) => ({
          cluster: `c${c}`,
          doc: cut(new Set(all.filter((_, i) => groupOwners[i]!.includes(c))), (g, r) =>
            owners(g, r).includes(c),
          ),
        }));
        // with one cluster holding every group (and no resources), the group order is fully known
        const full = { cluster: 'full', doc: cut(new Set(all), () => false) };
        expect(mergeAggregated([full, ...docs], 'v2')).toEqual(AGG);
        // without it, every group and each cluster's group order are still there
        const names = mergeAggregated(docs, 'v2').items.map((g) => g.metadata!.name!);
        expect(names.length).toBe(all.length);
        for (const d of docs)
          expect(
            isSubsequence(
              d.doc.items.map((g) => g.metadata!.name!),
              names,
            ),
          ).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('a group-version served by one cluster only appears, with the first cluster’s resource details', () => {
    const widgets: APIGroupDiscovery = {
      metadata: { name: 'example.fleet.io' },
      versions: [
        {
          version: 'v1',
          resources: [
            {
              resource: 'widgets',
              responseKind: { group: '', version: '', kind: 'Widget' },
              scope: 'Namespaced',
              singularResource: 'widget',
              verbs: ['get', 'list'],
            },
          ],
          freshness: 'Current',
        },
      ],
    };
    const karmada = { cluster: 'karmada', doc: cut(new Set(['apps']), () => true) };
    const member1 = {
      cluster: 'member1',
      doc: {
        ...cut(new Set(['apps']), () => true),
        items: cut(new Set(['apps']), () => true).items.map((g) => ({
          ...g,
          versions: g.versions!.map((v) => ({
            ...v,
            freshness: 'Stale',
            resources: v.resources!.map((r) => ({ ...r, shortNames: ['changed'] })),
          })),
        })),
      },
    };
    const member2 = { cluster: 'member2', doc: { ...AGG, items: [widgets] } };
    const m = mergeAggregated([karmada, member1, member2], 'v2');
    expect(m.items.map((g) => g.metadata!.name)).toEqual(['apps', 'example.fleet.io']);
    expect(m.items[1]).toEqual(widgets);
    const deployments = m.items[0]!.versions![0]!.resources!.find((r) => r.resource === 'deployments')!;
    expect(deployments.shortNames).toEqual(['deploy']); // karmada's, first in fleet order
    // karmada answered apps/v1 fresh: member1's stale copy does not make it stale
    expect(m.items[0]!.versions![0]!.freshness).toBe(karmada.doc.items[0]!.versions![0]!.freshness);
    expect(m.items[0]!.versions![0]!.freshness).toBe('Current');
    // only stale copies: Stale
    const alone = mergeAggregated([member1, member2], 'v2');
    expect(alone.items[0]!.versions!.map((v) => v.freshness)).toEqual(
      alone.items[0]!.versions!.map(() => 'Stale'),
    );
    expect(alone.items[1]!.versions![0]!.freshness).toBe('Current');
  });

  it('unions subresources (first cluster wins each)', () => {
    const pods = (subs: string[], verbs: string[]) => ({
      items: [
        {
          metadata: {},
          versions: [
            {
              version: 'v1',
              resources: [
                {
                  resource: 'pods',
                  scope: 'Namespaced' as const,
                  subresources: subs.map((s) => ({ subresource: s, verbs })),
                },
              ],
            },
          ],
        },
      ],
    });
    const m = mergeAggregated(
      [
        { cluster: 'a', doc: pods(['log', 'status'], ['get']) },
        { cluster: 'b', doc: pods(['exec', 'resize', 'status'], ['patch']) },
      ],
      'v2',
    );
    expect(m.items[0]!.metadata).toEqual({});
    expect(m.items[0]!.versions![0]!.resources![0]!.subresources).toEqual([
      { subresource: 'exec', verbs: ['patch'] },
      { subresource: 'log', verbs: ['get'] },
      { subresource: 'resize', verbs: ['patch'] },
      { subresource: 'status', verbs: ['get'] },
    ]);
  });

  it('builds the aggregated entry from legacy documents like kube-apiserver writes it', () => {
    // the core group (/api's only entry), from the real /api/v1
    const g = aggregatedFromLegacy('', ['v1'], new Map([['v1', CORE_V1]]));
    expect(g.metadata).toEqual({});
    const v1 = g.versions![0]!;
    expect(v1.version).toBe('v1');
    expect(v1.freshness).toBe('Current');
    const pods = v1.resources!.find((r) => r.resource === 'pods')!;
    expect(pods).toMatchObject({
      resource: 'pods',
      responseKind: { group: '', version: '', kind: 'Pod' },
      scope: 'Namespaced',
      singularResource: 'pod',
      shortNames: ['po'],
      categories: ['all'],
    });
    expect(pods.subresources!.map((s) => s.subresource)).toEqual([
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
    expect(pods.subresources!.find((s) => s.subresource === 'eviction')!.responseKind).toEqual({
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
    });
    // the apps group of the real aggregated document, rebuilt from its legacy APIResourceList
    const apps = aggregatedFromLegacy('apps', ['v1'], new Map([['v1', fixture('apis__apps__v1.json')]]));
    const real = AGG.items.find((i) => i.metadata?.name === 'apps')!;
    expect(apps).toEqual(real);
  });
});

describe('OpenAPI v3 root', () => {
  const root = (paths: Record<string, string>) => ({
    paths: Object.fromEntries(
      Object.entries(paths).map(([p, h]) => [p, { serverRelativeURL: `/openapi/v3/${p}?hash=${h}` }]),
    ),
  });

  it('unions the paths, first cluster’s URL kept relative, keys sorted; says who serves what', () => {
    const { root: m, servedBy } = mergeOpenAPIV3Roots([
      {
        cluster: 'karmada',
        doc: root({ 'apis/apps/v1': 'K1', api: 'K0', 'apis/cluster.karmada.io/v1alpha1': 'KC' }),
      },
      { cluster: 'member1', doc: root({ 'apis/apps/v1': 'M1', api: 'M0' }) },
      { cluster: 'member2', doc: root({ 'apis/apps/v1': 'K1', 'apis/example.fleet.io/v1': 'W' }) },
    ]);
    expect(Object.keys(m.paths)).toEqual([
      'api',
      'apis/apps/v1',
      'apis/cluster.karmada.io/v1alpha1',
      'apis/example.fleet.io/v1',
    ]);
    expect(m.paths['apis/apps/v1']!.serverRelativeURL).toBe('/openapi/v3/apis/apps/v1?hash=K1');
    expect(m.paths['apis/example.fleet.io/v1']!.serverRelativeURL).toBe(
      '/openapi/v3/apis/example.fleet.io/v1?hash=W',
    );
    const apps = servedBy.get('apis/apps/v1')!;
    expect(apps).toEqual([
      { cluster: 'karmada', hash: 'K1' },
      { cluster: 'member1', hash: 'M1' },
      { cluster: 'member2', hash: 'K1' },
    ]);
    // that hash first (fleet order), then the others; no hash: fleet order
    expect(openAPIClustersFor(apps, 'M1')).toEqual(['member1', 'karmada', 'member2']);
    expect(openAPIClustersFor(apps, 'K1')).toEqual(['karmada', 'member2', 'member1']);
    expect(openAPIClustersFor(apps, 'stale')).toEqual(['karmada', 'member1', 'member2']);
    expect(openAPIClustersFor(apps, undefined)).toEqual(['karmada', 'member1', 'member2']);
  });
});

describe('content negotiation', () => {
  it.each([
    [KUBECTL_ACCEPT, { kind: 'aggregated', version: 'v2' }],
    [
      'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json',
      { kind: 'aggregated', version: 'v2beta1' },
    ],
    // an older client's v2beta1 with a newer server, q-values and parameter order as sent
    [
      'application/json;q=0.8,application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io;q=0.9',
      { kind: 'aggregated', version: 'v2' },
    ],
    [
      'application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io;q=0.5,application/json',
      { kind: 'legacy' },
    ],
    // protobuf first: the fleet writes merged documents as JSON only, so the next range wins
    [
      `application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,${KUBECTL_ACCEPT}`,
      { kind: 'aggregated', version: 'v2' },
    ],
    [
      'application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json',
      { kind: 'legacy' },
    ],
    ['application/json;as=Table;v=v1;g=meta.k8s.io,*/*', { kind: 'legacy' }],
    ['*/*', { kind: 'legacy' }],
    ['application/*', { kind: 'legacy' }],
    ['', { kind: 'legacy' }],
    [null, { kind: 'legacy' }],
    ['application/vnd.kubernetes.protobuf', undefined],
    ['application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0', undefined],
    ['text/html', undefined],
  ])('%s → %j', (accept, want) => {
    expect(negotiateDiscovery(accept, true)).toEqual(want);
  });

  it('only /api and /apis answer aggregated discovery', () => {
    expect(negotiateDiscovery(KUBECTL_ACCEPT, false)).toEqual({ kind: 'legacy' });
    expect(negotiateDiscovery(aggregatedContentType('v2'), false)).toBeUndefined();
  });

  it('orders ranges like goautoneg: q, then concrete before wildcard, then as sent', () => {
    expect(
      parseAccept('*/*, text/*;q=0.9, application/json, application/yaml;q=1').map(
        (r) => `${r.type}/${r.subtype}`,
      ),
    ).toEqual(['application/json', 'application/yaml', '*/*', 'text/*']);
  });

  it('reads which aggregated version an upstream answered', () => {
    expect(aggregatedVersionOf(aggregatedContentType('v2'))).toBe('v2');
    expect(aggregatedVersionOf(aggregatedContentType('v2beta1'))).toBe('v2beta1');
    expect(aggregatedVersionOf('application/json')).toBeUndefined();
    expect(aggregatedVersionOf(null)).toBeUndefined();
    expect(AGGREGATED_UPSTREAM_ACCEPT).toBe(KUBECTL_ACCEPT);
  });

  it('the Content-Type is exactly kube-apiserver’s', () => {
    expect(aggregatedContentType('v2')).toBe(
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
  });
});

describe('ETag', () => {
  it('is the quoted upper-case hex SHA-512 of the body', async () => {
    expect(await discoveryETag('')).toBe(
      '"CF83E1357EEFB8BDF1542850D66D8007D620E4050B5715DC83F4A921D36CE9CE47D0D13C5D85F2B0FF8318D2877EEC2F63B931BD47417A81A538327AF927DA3E"',
    );
    expect(await discoveryETag('{"a":1}')).not.toBe(await discoveryETag('{"a":2}'));
  });

  it('If-None-Match matches the tag, a list holding it, its weak form, or *', () => {
    expect(etagMatches('"X"', '"X"')).toBe(true);
    expect(etagMatches('"A", "X"', '"X"')).toBe(true);
    expect(etagMatches('W/"X"', '"X"')).toBe(true);
    expect(etagMatches('*', '"X"')).toBe(true);
    expect(etagMatches('"Y"', '"X"')).toBe(false);
    expect(etagMatches(null, '"X"')).toBe(false);
  });
});
