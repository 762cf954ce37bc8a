/**
 * The fleet over ClusterProfiles (issue 34 part 3) in front of the three real members: karmada-apiserver
 * is the inventory hub with the cluster-inventory-api CRD, one profile per member whose `secretreader`
 * access provider gives the member's server and CA and whose token (a member ServiceAccount's) sits in the
 * hub's Secret, as the KEP-5339 plugin reads it (testbed/clusterprofiles.ts). kubectl get/list/watch/create
 * by fleet name through it, each read answered as the fleet over Karmada's Clusters answers it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bed, type ClusterInfo, clusterKubectl, fleetKubectl, ok, until } from './bed.ts';

const ns = `cprofile-${randomBytes(3).toString('hex')}`;
const b = bed();
const members = b.members;
const direct = (m: ClusterInfo) => clusterKubectl(m);
const hub = clusterKubectl(b.karmadaApiserver);
const CLUSTER_COL = 'CLUSTER:.metadata.labels.fleet\\.karmada\\.io/cluster';

describe('a fleet over ClusterProfiles, against real members', () => {
  const info = b.fleets.clusterProfiles;
  if (!info)
    throw new Error('the bed was started without its ClusterProfile fleet (startBed clusterProfiles)');
  const fleet = fleetKubectl(info);
  const karmada = fleetKubectl(b.fleets.karmada);

  beforeAll(async () => {
    for (const m of members) {
      await ok(direct(m), ['create', 'namespace', ns]);
      await ok(direct(m), [
        'create',
        'configmap',
        `cm-${m.name}`,
        '-n',
        ns,
        `--from-literal=owner=${m.name}`,
      ]);
    }
  });

  afterAll(async () => {
    for (const m of members) await direct(m).run(['delete', 'namespace', ns, '--wait=false']);
  });

  it('the hub holds a profile per member, as the CRD from the module serves them', async () => {
    const list = JSON.parse(
      await ok(hub, ['get', 'clusterprofiles.multicluster.x-k8s.io', '-n', 'fleet', '-o', 'json']),
    );
    expect(list.items.map((p: any) => p.metadata.name).sort()).toEqual(members.map((m) => m.name).sort());
    for (const p of list.items) {
      const m = members.find((x) => x.name === p.metadata.name)!;
      expect(p.status.accessProviders[0]).toMatchObject({ name: 'secretreader', cluster: { server: m.url } });
      expect(p.status.conditions.find((c: any) => c.type === 'ControlPlaneHealthy').status).toBe('True');
    }
  });

  // the same reads through both fleets: same names, same clusters, same objects
  const MATRIX: Array<[string, () => string[]]> = [
    [
      'list configmaps of a namespace, with clusters and uids',
      () => [
        'get',
        'configmaps',
        '-n',
        ns,
        '-o',
        `custom-columns=NAME:.metadata.name,${CLUSTER_COL},UID:.metadata.uid`,
      ],
    ],
    [
      'list across namespaces by label selector',
      () => [
        'get',
        'configmaps',
        '-A',
        '-l',
        `suite=${ns}`,
        '-o',
        `custom-columns=NS:.metadata.namespace,NAME:.metadata.name,${CLUSTER_COL}`,
      ],
    ],
    ['list nodes by name', () => ['get', 'nodes', '-o', 'name']],
    [
      'get by fleet name',
      () => [
        'get',
        'configmap',
        'cm-member2.clusterspace.member2',
        '-n',
        ns,
        '-o',
        'jsonpath={.metadata.name} {.metadata.uid} {.data.owner}',
      ],
    ],
    ['paged list', () => ['get', 'configmaps', '-n', ns, '--chunk-size=1', '-o', 'name']],
    ['api-resources', () => ['api-resources', '-o', 'name']],
  ];
  it.each(MATRIX)('%s: the same answer as the fleet over Karmada', async (_what, args) => {
    const a = args();
    // each fleet keeps discovery for 5 s, and suites running beside this one install CRDs meanwhile (the
    // client-go suite's Gadget in member3): the two answers are asked again until they agree, for a minute
    let overProfiles: string;
    let overKarmada: string;
    for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 1_000))) {
      [overProfiles, overKarmada] = [await ok(fleet, a), await ok(karmada, a)];
      if (overProfiles === overKarmada || Date.now() > deadline) break;
    }
    expect(overProfiles.trim()).not.toBe('');
    expect(overProfiles).toBe(overKarmada);
  });

  it('every member is in the merged list, each configmap under its fleet name', async () => {
    const out = await ok(fleet, ['get', 'configmaps', '-n', ns, '-o', 'name']);
    for (const m of members) expect(out).toContain(`configmap/cm-${m.name}.clusterspace.${m.name}`);
  });

  it('create by fleet name lands in the member under its plain name', async () => {
    await ok(fleet, ['create', 'configmap', 'made.clusterspace.member3', '-n', ns, '--from-literal=k=v']);
    const m3 = members.find((m) => m.name === 'member3')!;
    const got = JSON.parse(await ok(direct(m3), ['get', 'configmap', 'made', '-n', ns, '-o', 'json']));
    expect(got.data).toEqual({ k: 'v' });
    expect(got.metadata.labels?.['fleet.karmada.io/cluster']).toBeUndefined();
  });

  it('watch sees an object created in a member, by its fleet name', async () => {
    const w = fleet.spawn(['get', 'configmaps', '-n', ns, '-w', '-o', 'name']);
    try {
      await w.waitFor(/configmap\/cm-member1\.clusterspace\.member1/, 60_000);
      await ok(direct(members[0]!), ['create', 'configmap', 'watched', '-n', ns]);
      await w.waitFor(new RegExp(`configmap/watched\\.clusterspace\\.${members[0]!.name}`), 60_000);
    } finally {
      w.stop();
    }
  });

  it('a profile deleted from the hub takes its member out of the fleet; published again, it is back', async () => {
    const name = 'member1';
    const saved = JSON.parse(await ok(hub, ['get', 'clusterprofile', name, '-n', 'fleet', '-o', 'json']));
    const clusters = async () =>
      new Set(
        (
          await ok(fleet, [
            'get',
            'configmaps',
            '-n',
            ns,
            '-o',
            `custom-columns=${CLUSTER_COL}`,
            '--no-headers',
          ])
        )
          .trim()
          .split('\n'),
      );
    await ok(hub, ['delete', 'clusterprofile', name, '-n', 'fleet']);
    try {
      await until(
        'member1 out of the fleet',
        async () => ((await clusters()).has(name) ? undefined : true),
        60_000,
      );
    } finally {
      // back as the manager wrote it: the object, then its status
      const {
        resourceVersion: _rv,
        uid: _uid,
        creationTimestamp: _ct,
        managedFields: _mf,
        generation: _g,
        ...meta
      } = saved.metadata;
      await ok(hub, ['create', '-f', '-'], JSON.stringify({ ...saved, metadata: meta, status: undefined }));
      const fresh = JSON.parse(await ok(hub, ['get', 'clusterprofile', name, '-n', 'fleet', '-o', 'json']));
      await ok(
        hub,
        ['replace', '--subresource=status', '-f', '-'],
        JSON.stringify({ ...fresh, status: saved.status }),
      );
    }
    await until(
      'member1 back in the fleet',
      async () => ((await clusters()).has(name) ? true : undefined),
      60_000,
    );
  });
});
