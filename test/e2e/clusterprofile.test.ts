/**
 * A fleet over ClusterProfiles (issue 34 part 3) answers kubectl as the fleet over Karmada's Clusters
 * does, on Node and in workerd. Both fleets run side by side on the same simulated control plane and
 * members: the Karmada one reaches them through the cluster proxy, the ClusterProfile one at the servers
 * a hub's profiles publish (SimProfileHub), with the token the secretreader convention puts in the hub's
 * Secrets. Every command of the matrix runs through both and must print the same.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveSim } from '../../deploy/node/demo.ts';
import type { ServedHandle } from '../../deploy/node/http.ts';
import { SimProfileHub } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const CMS = { group: '', version: 'v1', resource: 'configmaps' };

async function until(
  cond: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The kubectl matrix: read commands whose output does not depend on when they ran. */
const MATRIX: Array<{
  what: string;
  args: (pod: { ns: string; fleetName: string }) => string[];
  path?: string;
}> = [
  {
    what: 'get pods -A, names, clusters and resourceVersions',
    args: () => [
      'get',
      'pods',
      '-A',
      '-o',
      'custom-columns=NS:.metadata.namespace,NAME:.metadata.name,CLUSTER:.metadata.labels.fleet\\.karmada\\.io/cluster,RV:.metadata.resourceVersion',
    ],
  },
  {
    what: 'get pods -A --chunk-size=2 -o name',
    args: () => ['get', 'pods', '-A', '--chunk-size=2', '-o', 'name'],
  },
  {
    what: 'get deployments,services -A -o name',
    args: () => ['get', 'deployments,services', '-A', '-o', 'name'],
  },
  { what: 'get namespaces -o name', args: () => ['get', 'namespaces', '-o', 'name'] },
  { what: 'get nodes -o name', args: () => ['get', 'nodes', '-o', 'name'] },
  {
    what: 'get one pod by fleet name -o json',
    args: (p) => ['get', 'pod', p.fleetName, '-n', p.ns, '-o', 'json'],
  },
  {
    what: 'get pods in a namespace through /clusterspaces/member1',
    args: (p) => ['get', 'pods', '-n', p.ns, '-o', 'name'],
    path: '/clusterspaces/member1',
  },
  { what: 'api-resources', args: () => ['api-resources', '-o', 'name'] },
];

describe.each(RUNTIMES)('a fleet over ClusterProfiles on %s', (runtime) => {
  let hub: SimProfileHub | undefined;
  let served: ServedHandle | undefined;
  const f = useSimFleet(runtime, {
    prepare: async (sims) => {
      hub = new SimProfileHub({ name: 'hub' });
      served = await serveSim(hub);
      for (const [name, sim] of sims.members) hub.addProfile(name, sim, sims.memberUrls.get(name)!);
      return async () => {
        hub?.close();
        await served?.close(500);
      };
    },
    // the same control plane (`karmada` and its objects stay one more cluster), members from the hub
    config: (sims) =>
      sims.karmadaConfig({
        members: {
          mode: 'clusterProfiles',
          hub: { server: served!.url, token: 'fleet-hub-token' },
          namespace: 'fleet',
          accessProviders: [{ name: 'secretreader', secretReader: { namespace: 'fleet-system' } }],
          refreshSeconds: 1,
        },
      }),
    extra: { karmada: (sims) => sims.karmadaConfig() },
  });
  let cp: Kubectl;
  const karmada = new Map<string, Kubectl>();
  afterAll(() => {
    for (const k of karmada.values()) rmSync(k.dir, { recursive: true, force: true });
  });
  const pod = { ns: '', fleetName: '' };

  beforeAll(() => {
    cp = f.kubectl();
    const p = f.member('member2').list(PODS)[0]!;
    pod.ns = p.metadata.namespace!;
    pod.fleetName = `${p.metadata.name}.clusterspace.member2`;
  });

  const run = async (k: Kubectl, args: string[]) => {
    const r = await k.run(args);
    expect(r.stderr, `kubectl ${args.join(' ')}`).toBe('');
    expect(r.code).toBe(0);
    return r.stdout;
  };
  /** kubectl to the Karmada-membership fleet beside it, one per path, removed after the file */
  const viaKarmada = (path = '') => {
    let k = karmada.get(path);
    if (!k) {
      k = new Kubectl(`${f.extra('karmada').url}${path}`);
      karmada.set(path, k);
    }
    return k;
  };

  it.each(MATRIX)('$what: the same answer as over Karmada', async ({ args, path }) => {
    const a = args(pod);
    const overProfiles = await run(f.kubectl(path ?? ''), a);
    const overKarmada = await run(viaKarmada(path ?? ''), a);
    expect(overProfiles.trim()).not.toBe('');
    expect(overProfiles).toBe(overKarmada);
  });

  it('every member is there, reached with the token its Secret on the hub holds', async () => {
    const out = await run(cp, [
      'get',
      'pods',
      '-A',
      '-o',
      'custom-columns=C:.metadata.labels.fleet\\.karmada\\.io/cluster',
      '--no-headers',
    ]);
    expect(new Set(out.trim().split('\n'))).toEqual(new Set(['member1', 'member2', 'member3']));
    for (const name of ['member1', 'member2', 'member3'])
      expect(
        f.member(name).requests.some((r) => r.headers.authorization === `Bearer ${name}-token`),
        `${name} was called with its secretreader token`,
      ).toBe(true);
    // the hub is asked as the fleet, with the hub's credential
    expect(
      hub!.requests.some(
        (r) =>
          r.url.includes('/secrets/member1-spoke') && r.headers.authorization === 'Bearer fleet-hub-token',
      ),
    ).toBe(true);
  });

  it('create by fleet name lands in the member, and the Karmada fleet reads it back the same', async () => {
    await run(cp, [
      'create',
      'configmap',
      'cp-made.clusterspace.member3',
      '-n',
      'default',
      '--from-literal=k=v',
    ]);
    const inMember = f.member('member3').get(CMS, 'default', 'cp-made') as
      | { data?: Record<string, string> }
      | undefined;
    expect(inMember?.data).toEqual({ k: 'v' });
    const get = ['get', 'configmap', 'cp-made.clusterspace.member3', '-n', 'default', '-o', 'json'];
    expect(await run(cp, get)).toBe(await run(viaKarmada(), get));
    await run(cp, ['delete', 'configmap', 'cp-made.clusterspace.member3', '-n', 'default']);
    expect(f.member('member3').get(CMS, 'default', 'cp-made')).toBeUndefined();
  });

  it('watch -o name sees an object created in a member, with its fleet name', async () => {
    const w = cp.spawn(['get', 'configmaps', '-n', 'default', '-w', '-o', 'name']);
    try {
      await until(() => f.member('member1').openWatches() > 0, 'the watch reached member1');
      f.member('member1').create(CMS, {
        metadata: { name: 'watched', namespace: 'default' },
        data: { a: 'b' },
      });
      await w.waitFor(/configmap\/watched\.clusterspace\.member1/);
    } finally {
      w.stop();
      f.member('member1').remove(CMS, 'default', 'watched');
    }
  });

  it('a profile leaving the hub takes its member out after the refresh; an open watch takes it in when it returns', async () => {
    const clusters = async () =>
      new Set(
        (
          await run(cp, [
            'get',
            'namespaces',
            '-o',
            'custom-columns=C:.metadata.labels.fleet\\.karmada\\.io/cluster',
            '--no-headers',
          ])
        )
          .trim()
          .split('\n'),
      );
    hub!.removeProfile('member3');
    await until(async () => !(await clusters()).has('member3'), 'member3 gone');
    const m3 = f.member('member3');
    const w = cp.spawn(['get', 'configmaps', '-n', 'default', '-w', '-o', 'name']);
    try {
      await until(() => f.member('member1').openWatches() > 0, 'the watch open');
      hub!.addProfile('member3', m3, f.sims.memberUrls.get('member3')!);
      // the watch follows the membership as in the Karmada mode: member3's objects stream in
      await until(() => m3.openWatches() > 0, 'the watch reaching member3');
      m3.create(CMS, { metadata: { name: 'late', namespace: 'default' } });
      await w.waitFor(/configmap\/late\.clusterspace\.member3/);
    } finally {
      w.stop();
      m3.remove(CMS, 'default', 'late');
    }
    await until(async () => (await clusters()).has('member3'), 'member3 back');
  });
});
