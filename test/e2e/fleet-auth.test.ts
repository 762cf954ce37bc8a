/**
 * Fleet-wide `kubectl auth can-i`, `auth can-i --list` and `auth whoami` with real kubectl 1.35, on Node
 * and in workerd. The simulated members enforce RBAC on the impersonated user (`--as`): bob may read pods
 * in member1 and member2 only, carol everywhere. At the root URL a review is asked of every cluster and
 * holds only where every cluster agrees; through `/clusterspaces/<cluster>` it is that cluster's own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import type { SimRule } from '../../sim/rbac.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const READ_PODS: SimRule[] = [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }];

function enforceRbac(s: ServedSimFleet): void {
  for (const [name, sim] of s.members)
    sim.rbac = {
      users: {
        bob: name === 'member3' ? [] : READ_PODS,
        carol: READ_PODS,
        root: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      },
    };
}

describe.each(RUNTIMES)('fleet-wide access reviews on %s', (runtime) => {
  const f = useSimFleet(runtime, { prepare: enforceRbac });

  afterEach(async () => {
    if (f.member('member3').faults.down) await f.memberUp('member3');
  });

  it('can-i: yes only where every cluster allows; no names the clusters that deny (exit 1)', async () => {
    const k = f.kubectl();
    const bob = await k.run(['auth', 'can-i', 'list', 'pods', '--as', 'bob']);
    expect(bob.code, bob.stderr).toBe(1);
    expect(bob.stdout).toMatch(/^no - member3 not allowed/);
    expect(bob.stdout).not.toMatch(/member1|member2/);

    const carol = await k.run(['auth', 'can-i', 'list', 'pods', '--as', 'carol', '-n', 'shop']);
    expect(carol.code, carol.stderr).toBe(0);
    expect(carol.stdout.trim()).toBe('yes');

    const write = await k.run(['auth', 'can-i', 'delete', 'pods', '--as', 'carol']);
    expect(write.code).toBe(1);
    expect(write.stdout).toMatch(/^no - member1 not allowed; member2 not allowed; member3 not allowed/);

    const admin = await k.run(['auth', 'can-i', 'delete', 'pods', '--as', 'root']);
    expect(admin.stdout.trim()).toBe('yes');
  });

  it('can-i through /clusterspaces/<cluster> is that cluster’s own answer', async () => {
    const m1 = await f
      .kubectl('/clusterspaces/member1')
      .run(['auth', 'can-i', 'list', 'pods', '--as', 'bob']);
    expect(m1.stdout.trim()).toBe('yes');
    const m3 = await f
      .kubectl('/clusterspaces/member3')
      .run(['auth', 'can-i', 'list', 'pods', '--as', 'bob']);
    expect(m3.code).toBe(1);
    expect(m3.stdout.trim()).toBe('no');
  });

  it('a cluster that cannot be asked: not allowed, named in the reason, and a warning', async () => {
    f.member('member3').faults.down = true;
    const r = await f.kubectl().run(['auth', 'can-i', 'list', 'pods', '--as', 'carol']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^no - member3 could not be asked/);
    expect(r.stderr).toMatch(/Warning: cluster member3/);
  });

  it('the per-cluster breakdown, asked for with the fleet.karmada.io/clusters annotation', async () => {
    const review = JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: { annotations: { 'fleet.karmada.io/clusters': '' } },
      spec: { resourceAttributes: { verb: 'list', resource: 'pods', namespace: 'shop' } },
    });
    const r = await f
      .kubectl()
      .run(['create', '--validate=false', '-f', '-', '-o', 'json', '--as', 'bob'], { stdin: review });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.status.allowed).toBe(false);
    const per = JSON.parse(out.metadata.annotations['fleet.karmada.io/clusters']);
    expect(per.member1.allowed).toBe(true);
    expect(per.member2.allowed).toBe(true);
    expect(per.member3).toEqual({ allowed: false });
    expect(Object.keys(per)).toEqual([...(per.karmada ? ['karmada'] : []), 'member1', 'member2', 'member3']);

    // a fleet-named namespace asks that cluster alone
    const one = JSON.parse(review);
    one.spec.resourceAttributes.namespace = 'shop.clusterspace.member2';
    const r2 = await f.kubectl().run(['create', '--validate=false', '-f', '-', '-o', 'json', '--as', 'bob'], {
      stdin: JSON.stringify(one),
    });
    const out2 = JSON.parse(r2.stdout);
    expect(out2.status.allowed).toBe(true);
    expect(Object.keys(JSON.parse(out2.metadata.annotations['fleet.karmada.io/clusters']))).toEqual([
      'member2',
    ]);
  });

  it('can-i --list: the rules that hold in every cluster', async () => {
    const k = f.kubectl();
    const carol = await k.run(['auth', 'can-i', '--list', '--as', 'carol', '-n', 'shop']);
    expect(carol.code, carol.stderr).toBe(0);
    expect(carol.stdout).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]/m);
    expect(carol.stdout).toMatch(/selfsubjectaccessreviews\.authorization\.k8s\.io/);
    const bob = await k.run(['auth', 'can-i', '--list', '--as', 'bob', '-n', 'shop']);
    expect(bob.code, bob.stderr).toBe(0);
    expect(bob.stdout).not.toMatch(/^pods\s/m);
    expect(bob.stdout).toMatch(/selfsubjectaccessreviews\.authorization\.k8s\.io/);
    // stars in every cluster (the control plane without RBAC answers with cluster-admin's)
    const admin = await k.run(['auth', 'can-i', '--list', '--as', 'root']);
    expect(admin.stdout).toMatch(/^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]/m);
  });

  it('can-i --list with a cluster down is incomplete', async () => {
    f.member('member3').faults.down = true;
    const review = JSON.stringify({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'shop' },
    });
    const r = await f
      .kubectl()
      .run(['create', '--validate=false', '-f', '-', '-o', 'json', '--as', 'carol'], { stdin: review });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.status.incomplete).toBe(true);
    expect(out.status.evaluationError).toMatch(/member3: could not be asked/);
  });

  it('whoami: the identity the fleet sends upstream, after --as', async () => {
    const k = f.kubectl();
    const bob = await k.run(['auth', 'whoami', '--as', 'bob', '--as-group', 'viewers', '-o', 'json']);
    expect(bob.code, bob.stderr).toBe(0);
    const info = JSON.parse(bob.stdout).status.userInfo;
    expect(info.username).toBe('bob');
    expect(info.groups).toEqual(['viewers', 'system:authenticated']);
    const me = await k.run(['auth', 'whoami']);
    expect(me.code, me.stderr).toBe(0);
    // the demo fleet admits anonymous callers
    expect(me.stdout).toMatch(/Username\s+system:anonymous/);
  });
});
