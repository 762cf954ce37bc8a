/**
 * The merged fleet view through the root URL, with real kubectl 1.35 and @kubernetes/client-node, on
 * Node and in workerd: every cluster's objects as one cluster's, each with its cluster visible.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import { clientNode } from '../helpers/clientnode.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };

function allPods(sims: ServedSimFleet): string[] {
  return [...sims.members]
    .flatMap(([name, sim]) =>
      sim.list(PODS).map((p) => `${p.metadata.namespace}/${p.metadata.name}.clusterspace.${name}`),
    )
    .sort();
}

describe.each(RUNTIMES)('fleet reads on %s', (runtime) => {
  const f = useSimFleet(runtime);
  let k: Kubectl;

  beforeAll(() => {
    k = f.kubectl();
  });

  it('get pods -A shows every cluster’s pods with fleet names and a CLUSTER column', async () => {
    const r = await k.run(['get', 'pods', '-A']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAMESPACE\s+NAME\s+CLUSTER\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    const got = lines
      .slice(1)
      .map((l) => l.split(/\s+/))
      .map(([ns, name]) => `${ns}/${name}`)
      .sort();
    expect(got).toEqual(allPods(f.sims));
    for (const l of lines.slice(1)) {
      const [, name, cluster] = l.split(/\s+/);
      expect(name!.endsWith(`.clusterspace.${cluster}`)).toBe(true);
    }
  });

  it('-o wide keeps the wide columns; --chunk-size=2 returns the same set', async () => {
    const wide = await k.run(['get', 'pods', '-A', '-o', 'wide']);
    expect(wide.stdout.split('\n')[0]).toMatch(
      /NAMESPACE\s+NAME\s+CLUSTER\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE/,
    );
    const cols = ['-o', 'custom-columns=NS:.metadata.namespace,NAME:.metadata.name', '--no-headers'];
    const a = await k.run(['get', 'pods', '-A', ...cols]);
    const b = await k.run(['get', 'pods', '-A', '--chunk-size=2', ...cols]);
    expect(b.code).toBe(0);
    const set = (s: string) =>
      s
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s+/).join('/'))
        .sort();
    expect(set(b.stdout)).toEqual(set(a.stdout));
    expect(set(a.stdout)).toEqual(allPods(f.sims));
  });

  it('-o json of the list carries the cluster annotation and label, and decimal resourceVersions', async () => {
    const r = await k.run(['get', 'pods', '-A', '-o', 'json']);
    const list = JSON.parse(r.stdout) as { metadata: { resourceVersion: string }; items: any[] };
    expect(list.items.length).toBe(allPods(f.sims).length);
    for (const p of list.items) {
      const cluster = p.metadata.labels['fleet.karmada.io/cluster'];
      expect(p.metadata.annotations['fleet.karmada.io/cluster']).toBe(cluster);
      expect(p.metadata.name.endsWith(`.clusterspace.${cluster}`)).toBe(true);
      expect(p.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);
    }
  });

  it('--sort-by=.metadata.name sorts across clusters', async () => {
    const r = await k.run([
      'get',
      'pods',
      '-A',
      '--sort-by=.metadata.name',
      '--no-headers',
      '-o',
      'custom-columns=N:.metadata.name',
    ]);
    expect(r.code).toBe(0);
    const names = r.stdout
      .trim()
      .split('\n')
      .map((s) => s.trim());
    expect(names).toEqual([...names].sort());
    expect(names.length).toBe(allPods(f.sims).length);
  });

  it('-l app=web and -l fleet.karmada.io/cluster=member2 filter', async () => {
    const cols = [
      '-o',
      'custom-columns=N:.metadata.name,C:.metadata.labels.fleet\\.karmada\\.io/cluster,A:.metadata.labels.app',
      '--no-headers',
    ];
    const web = await k.run(['get', 'pods', '-A', '-l', 'app=web', ...cols]);
    const rows = web.stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    expect(rows.length).toBeGreaterThan(1);
    expect(new Set(rows.map((r) => r[2]))).toEqual(new Set(['web']));
    expect(new Set(rows.map((r) => r[1])).size).toBeGreaterThan(1);
    const m2 = await k.run(['get', 'pods', '-A', '-l', 'fleet.karmada.io/cluster=member2', ...cols]);
    const rows2 = m2.stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    expect(new Set(rows2.map((r) => r[1]))).toEqual(new Set(['member2']));
    expect(rows2.length).toBe(f.sims.members.get('member2')!.list(PODS).length);
    // the cluster term never reaches a cluster
    const seen = f.sims.members.get('member2')!.requests.filter((x) => x.url.includes('labelSelector'));
    expect(seen.some((x) => decodeURIComponent(x.url).includes('fleet.karmada.io'))).toBe(false);
  });

  it('get pod <fleet name> -o yaml and describe pod <fleet name> with its events', async () => {
    const pod = f.sims.members
      .get('member1')!
      .list(PODS)
      .find((p) => p.metadata.name!.startsWith('web-'))!;
    const fleetName = `${pod.metadata.name}.clusterspace.member1`;
    const y = await k.run(['get', 'pod', fleetName, '-n', 'shop', '-o', 'yaml']);
    expect(y.stderr).toBe('');
    expect(y.stdout).toContain(`name: ${fleetName}`);
    expect(y.stdout).toContain('fleet.karmada.io/cluster: member1');
    const d = await k.run(['describe', 'pod', fleetName, '-n', 'shop']);
    expect(d.code).toBe(0);
    expect(d.stdout).toMatch(new RegExp(`^Name:\\s+${fleetName.replace(/\./g, '\\.')}$`, 'm'));
    expect(d.stdout).toMatch(/Events:\s*\n\s+Type\s+Reason/);
    expect(d.stdout).toMatch(/Normal\s+Scheduled/);
  });

  it('a missing fleet name is a NotFound naming it', async () => {
    const r = await k.run(['get', 'pod', 'nope.clusterspace.member1', '-n', 'shop']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('pods "nope.clusterspace.member1" not found');
  });

  it('@kubernetes/client-node lists pods across the fleet and gets one by fleet name', async () => {
    const { core } = clientNode(f.url);
    const list = await core.listPodForAllNamespaces();
    const names = list.items.map((p) => `${p.metadata!.namespace}/${p.metadata!.name}`).sort();
    expect(names).toEqual(allPods(f.sims));
    const one = list.items.find((p) => p.metadata!.name!.endsWith('.clusterspace.member3'))!;
    const got = await core.readNamespacedPod({
      name: one.metadata!.name!,
      namespace: one.metadata!.namespace!,
    });
    expect(got.metadata!.uid).toBe(one.metadata!.uid);
    expect(got.metadata!.labels!['fleet.karmada.io/cluster']).toBe('member3');
  });

  it('with a member down, kubectl prints the rest and the warning; a tampered RV is a 410', async () => {
    f.sims.members.get('member3')!.faults.down = true;
    try {
      const r = await k.run(['get', 'pods', '-A', '--no-headers', '-o', 'custom-columns=N:.metadata.name']);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/Warning: cluster member3: /);
      const names = r.stdout.trim().split('\n');
      expect(names.every((n) => !n.endsWith('.clusterspace.member3'))).toBe(true);
      expect(names.some((n) => n.endsWith('.clusterspace.member2'))).toBe(true);
    } finally {
      f.sims.members.get('member3')!.faults.down = false;
    }
    const res = await fetch(`${f.url}/api/v1/pods?resourceVersion=1234567&resourceVersionMatch=NotOlderThan`);
    expect(res.status).toBe(410);
    expect(((await res.json()) as { reason: string }).reason).toBe('Expired');
  });
});

describe.each(RUNTIMES)('fleet reads with federation off and strict mode on %s', (runtime) => {
  const f = useSimFleet(runtime, {
    config: (sims) => sims.karmadaConfig({ federation: false }),
    extra: { strict: (sims) => sims.karmadaConfig({ strict: true }) },
  });

  it('a plain name in one cluster resolves; in two it is a 409 listing the fleet names', async () => {
    const k = new Kubectl(f.url);
    const only = await k.run(['get', 'deploy', 'api', '-n', 'shop', '-o', 'jsonpath={.metadata.name}']);
    expect(only.stderr).toBe('');
    expect(only.stdout).toBe('api.clusterspace.member3');
    const both = await k.run(['get', 'deploy', 'web', '-n', 'shop']);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('Error from server (Conflict)');
    expect(both.stderr).toContain('web.clusterspace.member1');
    expect(both.stderr).toContain('web.clusterspace.member2');
  });

  it('strict mode answers 503 when a member is down', async () => {
    f.sims.members.get('member2')!.faults.down = true;
    try {
      const res = await fetch(`${f.extra('strict').url}/api/v1/pods`);
      expect(res.status).toBe(503);
      const s = (await res.json()) as { kind: string; reason: string; message: string };
      expect(s.kind).toBe('Status');
      expect(s.reason).toBe('ServiceUnavailable');
      expect(s.message).toContain('member2');
    } finally {
      f.sims.members.get('member2')!.faults.down = false;
    }
  });
});
