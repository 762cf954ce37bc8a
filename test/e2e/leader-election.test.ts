/**
 * Leader election through the fleet's root URL, as a controller pointed at the fleet would run it: three
 * candidates, exactly one leader at a time, and failover when the leader stops renewing.
 *
 * With federation on (the default), a plain name at the root means the Karmada control plane, so the
 * lock (a Lease, or the Python client's ConfigMap lock) is one object in one place. With federation off
 * a plain name is otherwise looked up in every member, but Leases and LeaseCandidates keep the federated
 * view (src/plan/targets.ts `isElectionLock`): the same election, the lock in the control plane: a create-if-absent
 * by two candidates at once is one create and one 409 AlreadyExists, and an update carrying a stale
 * resourceVersion is a 409 Conflict, which is what makes the election safe.
 *
 * - Node, on both runtimes: @kubernetes/client-node 1.4 has no leader election of its own, so the
 *   candidates run client-go's algorithm (leaderelection.go tryAcquireOrRenew: get; create if absent;
 *   take over only after leaseDurationSeconds without a renewal observed; every write an optimistic
 *   update) over client-node's CoordinationV1Api.
 * - Python, on Node: Kubernetes' Python client's own `kubernetes.leaderelection` (its only lock is a
 *   ConfigMap), three processes; the leader is killed and another takes over.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../faults/fleet.ts';
import { clientNode } from '../helpers/clientnode.ts';
import { Candidate } from '../helpers/election.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PYTHON = process.env.FLEET_PYTHON ?? '/usr/bin/python3';
const NS = { group: '', version: 'v1', resource: 'namespaces' };
const LEASES = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
const CM = { group: '', version: 'v1', resource: 'configmaps' };

describe.each(RUNTIMES)('leader election through the fleet on %s', (runtime) => {
  const f = useSimFleet(runtime, {
    sims: { seed: false },
    // the members only: a plain name is no cluster's in general, but a Lease's is still the control plane's
    extra: { members: (sims) => sims.karmadaConfig({ federation: false }) },
    prepare: (sims) => {
      for (const s of [sims.karmada, ...sims.members.values()]) s.create(NS, { metadata: { name: 'le' } });
    },
  });
  const procs: ChildProcess[] = [];
  afterEach(() => {
    for (const p of procs.splice(0)) p.kill('SIGKILL');
  });

  /**
   * Three client-go-style candidates at `url` over the Lease `le/<name>`: one leader, failover when it
   * stops renewing; the Lease, and a LeaseCandidate by its plain name, live in the control plane only.
   */
  async function electThree(url: string, name: string): Promise<void> {
    const { kc } = clientNode(url);
    const api = kc.makeApiClient(k8s.CoordinationV1Api);
    const cands = ['a', 'b', 'c'].map((id) => new Candidate(id, api, 'le', name, 2, 200));
    // never two leaders at once, sampled throughout
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, cands.filter((c) => c.leading).length);
    }, 20);
    try {
      for (const c of cands) c.start();
      await until(() => cands.some((c) => c.leading), 20_000, 'a leader');
      await new Promise((r) => setTimeout(r, 1_500));
      const first = cands.filter((c) => c.leading);
      expect(first).toHaveLength(1);
      // one Lease, in the control plane, held by the leader; none in any member
      const lease = f.sims.karmada.get(LEASES, 'le', name) as { spec?: { holderIdentity?: string } };
      expect(lease?.spec?.holderIdentity).toBe(first[0]!.id);
      for (const m of f.sims.members.values()) expect(m.get(LEASES, 'le', name)).toBeUndefined();

      first[0]!.stop();
      await until(() => cands.some((c) => c !== first[0] && c.leading), 20_000, 'a new leader');
      await new Promise((r) => setTimeout(r, 1_000));
      const second = cands.filter((c) => c.leading);
      expect(second).toHaveLength(1);
      expect(second[0]!.id).not.toBe(first[0]!.id);
      const after = f.sims.karmada.get(LEASES, 'le', name) as { spec?: { leaseTransitions?: number } };
      expect(after?.spec?.leaseTransitions).toBe(1);
      expect(most).toBe(1);
      // a LeaseCandidate (coordinated leader election) by its plain name lands beside the Lease, once
      const candidate = {
        apiVersion: 'coordination.k8s.io/v1beta1',
        kind: 'LeaseCandidate',
        metadata: { name: `${name}-a`, namespace: 'le' },
        spec: { leaseName: name, binaryVersion: '1.35.0', strategy: 'OldestEmulationVersion' },
      };
      const path = `${url}/apis/coordination.k8s.io/v1beta1/namespaces/le/leasecandidates`;
      const made = await fetch(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(candidate),
      });
      expect(made.status).toBe(201);
      expect(((await made.json()) as { metadata: { name: string } }).metadata.name).toBe(`${name}-a`);
      const again = await fetch(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(candidate),
      });
      expect(again.status).toBe(409);
      expect(((await again.json()) as { reason: string }).reason).toBe('AlreadyExists');
      const CANDIDATES = { group: 'coordination.k8s.io', version: 'v1beta1', resource: 'leasecandidates' };
      expect(f.sims.karmada.get(CANDIDATES, 'le', `${name}-a`)).toBeDefined();
      for (const m of f.sims.members.values()) expect(m.get(CANDIDATES, 'le', `${name}-a`)).toBeUndefined();
      const read = await fetch(`${path}/${name}-a`);
      expect(read.status).toBe(200);
      await read.arrayBuffer();
    } finally {
      clearInterval(sampler);
      for (const c of cands) c.stop();
    }
  }

  it('three client-go-style candidates over a Lease: one leader, failover when it stops renewing', async () => {
    await electThree(f.url, `lock-${runtime}`);
  }, 60_000);

  it('federation off: a plain-named Lease is still the control plane’s, so the election is the same', async () => {
    // with federation off a plain name is otherwise looked up in every member (and a create refused):
    // Leases and LeaseCandidates keep the federated view, one lock in one place
    const url = f.extra('members').url;
    await electThree(url, `lock-off-${runtime}`);
    // the members' own Leases stay theirs, by fleet name, beside the control plane's in a list
    const mine = { metadata: { name: 'heartbeat', namespace: 'le' }, spec: { holderIdentity: 'node-1' } };
    f.member('member1').create(LEASES, mine);
    const listed = (await (
      await fetch(`${url}/apis/coordination.k8s.io/v1/namespaces/le/leases`)
    ).json()) as {
      items: Array<{ metadata: { name: string } }>;
    };
    const names = listed.items.map((i) => i.metadata.name);
    expect(names).toContain(`lock-off-${runtime}`);
    expect(names).toContain('heartbeat.clusterspace.member1');
    const one = await fetch(
      `${url}/apis/coordination.k8s.io/v1/namespaces/le/leases/heartbeat.clusterspace.member1`,
    );
    expect(one.status).toBe(200);
    expect(((await one.json()) as { spec: { holderIdentity: string } }).spec.holderIdentity).toBe('node-1');
    // a plain name the control plane does not have is its 404, not a search of the members
    const none = await fetch(`${url}/apis/coordination.k8s.io/v1/namespaces/le/leases/heartbeat`);
    expect(none.status).toBe(404);
    await none.arrayBuffer();
  }, 60_000);

  it.runIf(runtime === 'node')(
    "three Python candidates (the client's own leaderelection): one leader, another when it dies",
    async () => {
      const lock = 'py-lock';
      const lines: string[] = [];
      const byId = new Map<string, ChildProcess>();
      for (const id of ['p1', 'p2', 'p3']) {
        const p = spawn(PYTHON, ['-c', PY_CANDIDATE, f.url, 'le', lock, id], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        procs.push(p);
        byId.set(id, p);
        p.stdout!.on('data', (d: Buffer) => lines.push(...d.toString().trim().split('\n')));
      }
      const leaders = () => lines.filter((l) => l.startsWith('LEADING ')).map((l) => l.slice(8));
      await until(() => leaders().length > 0, 30_000, 'a Python leader');
      await new Promise((r) => setTimeout(r, 3_000));
      expect(leaders()).toHaveLength(1);
      const first = leaders()[0]!;
      const cm = f.sims.karmada.get(CM, 'le', lock) as { metadata: { annotations?: Record<string, string> } };
      expect(JSON.parse(cm.metadata.annotations!['control-plane.alpha.kubernetes.io/leader']!)).toMatchObject(
        {
          holderIdentity: first,
        },
      );
      for (const m of f.sims.members.values()) expect(m.get(CM, 'le', lock)).toBeUndefined();
      byId.get(first)!.kill('SIGKILL');
      await until(() => leaders().length > 1, 30_000, 'a second Python leader');
      await new Promise((r) => setTimeout(r, 3_000));
      expect(leaders()).toHaveLength(2);
      expect(leaders()[1]).not.toBe(first);
    },
    90_000,
  );
});

/** One Python candidate: prints `LEADING <id>` when it starts leading, and keeps leading. */
const PY_CANDIDATE = `
import sys, threading, time, logging
logging.disable(logging.CRITICAL)
from kubernetes import client
from kubernetes.leaderelection import leaderelection, electionconfig
from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock
server, ns, name, ident = sys.argv[1:5]
cfg = client.Configuration()
cfg.host = server
client.Configuration.set_default(cfg)
def lead():
    print("LEADING " + ident, flush=True)
config = electionconfig.Config(ConfigMapLock(name, ns, ident), lease_duration=4, renew_deadline=3,
                               retry_period=1, onstarted_leading=lead, onstopped_leading=None)
leaderelection.LeaderElection(config).run()
print("STOPPED " + ident, flush=True)
`;
