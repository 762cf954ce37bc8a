/**
 * The worker fleet in workerd (the bundle `wrangler deploy` ships, run by miniflare) in front of the real
 * bed. Every cluster of the bed serves TLS with a private CA of its own and takes client certificates,
 * and the worker refuses a private CA or an inline client certificate (src/platform/worker.ts): what
 * Workers offer instead is an `mtls_certificates` binding, one static client identity per binding. Here
 * each cluster gets one binding, a workerd network service whose TLS options present the fleet's
 * certificate for that cluster and trust that cluster's CA (what an uploaded mTLS certificate plus a
 * publicly trusted upstream certificate give a deployed worker). Callers authenticate with a static
 * token (the worker has no x509 authenticator: the edge terminates TLS) and are impersonated in every
 * cluster, as on Node. What does not work in workerd is in testbed/README.md ("The worker fleet").
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientNode } from '../helpers/clientnode.ts';
import { Candidate } from '../helpers/election.ts';
import { type RunningFleet, startWorkerFleet } from '../helpers/fleet.ts';
import { helmRunner } from '../helpers/helm.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { startPythonClient } from '../helpers/python.ts';
import { createTestCA } from '../helpers/tls.ts';
import {
  attachSeesLine,
  bed,
  type ClusterInfo,
  clusterKubectl,
  ensureNamespace,
  execEcho,
  forwardedHealthz,
  ok,
  runningPod,
  until,
} from './bed.ts';

const CHART = resolve('test/fixtures/charts/refs');
const ns = `rw-${randomBytes(3).toString('hex')}`;
const TOKEN = `bed-admin-${randomBytes(8).toString('hex')}`;

/** the worker's mTLS binding for one cluster: its CA trusted, the fleet's certificate for it presented */
function mtlsBinding(c: ClusterInfo) {
  return {
    network: {
      // the bed listens on loopback
      allow: ['local', 'private'],
      tlsOptions: {
        keypair: { privateKey: c.fleet.key, certificateChain: c.fleet.cert },
        trustedCertificates: [c.ca],
      },
    },
  };
}

const bindingName = (c: ClusterInfo) => `MTLS_${c.name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

describe('the worker fleet in workerd, in front of the real bed', () => {
  const b = bed();
  const members = b.members as [ClusterInfo, ClusterInfo, ClusterInfo];
  const clusters = [b.karmadaApiserver, ...members];
  const serving = createTestCA('real-workerd-ca');
  const fleets: RunningFleet[] = [];
  let direct: Kubectl;
  let karmada: Kubectl;
  const pods = new Map<string, string>();

  async function start(members: unknown): Promise<Kubectl> {
    const config = {
      controlPlane: {
        server: b.karmadaApiserver.url,
        mtlsCertificateBinding: bindingName(b.karmadaApiserver),
      },
      members,
      authentication: { staticTokens: { csv: `${TOKEN},bed-admin,bed-admin,"system:masters"\n` } },
    };
    const f = await startWorkerFleet(JSON.stringify(config), {
      // kubectl sends a bearer token over TLS only
      tls: serving.server(),
      bindings: Object.fromEntries(clusters.map((c) => [bindingName(c), mtlsBinding(c)])),
    });
    fleets.push(f);
    return new Kubectl(f.url, { caPem: serving.cert, token: TOKEN });
  }

  beforeAll(async () => {
    direct = await start({
      mode: 'static',
      clusters: members.map((m) => ({ name: m.name, server: m.url, mtlsCertificateBinding: bindingName(m) })),
    });
    karmada = await start({ mode: 'karmada', refreshSeconds: 5 });
    await ensureNamespace(clusters, ns);
    for (const m of members)
      await ok(clusterKubectl(m), ['create', 'deployment', 'web', '--image=nginx', '-n', ns]);
    for (const m of members) pods.set(m.name, await runningPod(clusterKubectl(m), ns, `a pod in ${m.name}`));
  });
  afterAll(async () => {
    await Promise.all(fleets.map((f) => f.stop()));
    for (const c of clusters) await clusterKubectl(c).run(['delete', 'namespace', ns, '--wait=false']);
  });

  const want = () => members.map((m) => `pod/${pods.get(m.name)}.clusterspace.${m.name}`).sort();

  it('static members: get, paged list, get by fleet name, as the members hold them', async () => {
    const listed = await ok(direct, ['get', 'pods', '-n', ns, '-o', 'name']);
    expect(listed.trim().split('\n').sort()).toEqual(want());
    const paged = await ok(direct, ['get', 'pods', '-n', ns, '--chunk-size=1', '-o', 'name']);
    expect(paged.trim().split('\n').sort()).toEqual(want());
    const m = members[1];
    const pod = pods.get(m.name)!;
    const byName = JSON.parse(
      await ok(direct, ['get', 'pod', `${pod}.clusterspace.${m.name}`, '-n', ns, '-o', 'json']),
    );
    const real = JSON.parse(await ok(clusterKubectl(m), ['get', 'pod', pod, '-n', ns, '-o', 'json']));
    expect(byName.metadata.uid).toBe(real.metadata.uid);
    // the caller is impersonated in the member: the member's RBAC decided for bed-admin
    const who = JSON.parse(await ok(direct, ['auth', 'whoami', '-o', 'json']));
    expect(who.status.userInfo.username).toBe('bed-admin');
  });

  it('static members: a watch sees a change made directly in a member, by fleet name', async () => {
    const w = direct.spawn(['get', 'configmaps', '-n', ns, '--watch', '-o', 'name']);
    try {
      await w.waitFor(/configmap\/kube-root-ca\.crt\.clusterspace\.member3/, 60_000);
      const m = members[2];
      await ok(clusterKubectl(m), ['create', 'configmap', 'watched', '-n', ns]);
      await w.waitFor(new RegExp(`configmap/watched\\.clusterspace\\.${m.name}`), 60_000);
    } finally {
      w.stop();
    }
  });

  it('static members: logs by fleet name come from the member', async () => {
    const m = members[0];
    const out = await ok(direct, ['logs', `${pods.get(m.name)}.clusterspace.${m.name}`, '-n', ns]);
    expect(out).toContain(m.logLine);
  });

  it('static members: exec by fleet name runs in the member over WebSocket', async () => {
    const m = members[2];
    const pod = `${pods.get(m.name)}.clusterspace.${m.name}`;
    expect(await execEcho(direct, pod, ns, 'exec-through-workerd')).toBe('exec-through-workerd');
  });

  it('static members: attach and port-forward by fleet name over WebSocket', async () => {
    const m = members[0];
    await attachSeesLine(direct, `${pods.get(m.name)}.clusterspace.${m.name}`, ns, m.logsFile);
    const pod = `pod/${pods.get(m.name)}.clusterspace.${m.name}`;
    expect(await forwardedHealthz(direct, pod, ns, m.ca)).toEqual({ status: 200, body: 'ok' });
  });

  it('Karmada members (through the cluster proxy): get and watch at the root', async () => {
    const listed = await until('the Clusters listed as members', async () => {
      const r = await karmada.run(['get', 'pods', '-n', ns, '-o', 'name']);
      const got = r.stdout.trim().split('\n').sort();
      if (r.code === 0 && got.length === 3) return got;
      if (r.code !== 0) throw new Error(r.stderr);
      return undefined;
    });
    expect(listed).toEqual(want());
    const w = karmada.spawn(['get', 'configmaps', '-n', ns, '--watch', '-o', 'name']);
    try {
      await w.waitFor(/configmap\/kube-root-ca\.crt\.clusterspace\.member1/, 60_000);
      await ok(clusterKubectl(members[0]), ['create', 'configmap', 'via-proxy', '-n', ns]);
      await w.waitFor(/configmap\/via-proxy\.clusterspace\.member1/, 60_000);
    } finally {
      w.stop();
    }
    const m = members[1];
    const out = await ok(karmada, [
      'exec',
      `${pods.get(m.name)}.clusterspace.${m.name}`,
      '-n',
      ns,
      '--',
      'sh',
      '-c',
      'echo exec-through-proxy',
    ]);
    expect(out.trim()).toBe('exec-through-proxy');
  });
  it('Helm 4 at the root of the Karmada-mode worker: install, upgrade, uninstall with --wait by fleet name', async () => {
    const m = members[2];
    const set = [
      '-n',
      ns,
      '--set',
      `fullnameOverride=x.clusterspace.${m.name}`,
      '--wait',
      '--timeout',
      '120s',
    ];
    const helm = helmRunner('real-workerd-helm-');
    try {
      const run = async (args: string[]) => {
        const r = await helm.run(karmada.kubeconfig, args, 240_000);
        expect(r.code, `helm ${args[0]}\n${r.stdout}\n${r.stderr}`).toBe(0);
      };
      const deploy = async () =>
        JSON.parse(await ok(clusterKubectl(m), ['get', 'deployment', 'x', '-n', ns, '-o', 'json']));
      await run(['install', 'wk', CHART, ...set]);
      const installed = await deploy();
      expect(installed.spec.template.spec.serviceAccountName).toBe('x');
      expect(installed.status.readyReplicas).toBe(1);
      await run(['upgrade', 'wk', CHART, ...set, '--set', 'image=nginx:2']);
      const upgraded = await deploy();
      expect(upgraded.metadata.uid).toBe(installed.metadata.uid);
      expect(upgraded.spec.template.spec.containers[0].image).toBe('nginx:2');
      const secrets = await ok(clusterKubectl(b.karmadaApiserver), [
        'get',
        'secrets',
        '-n',
        ns,
        '-l',
        'owner=helm,name=wk',
        '-o',
        'name',
      ]);
      expect(secrets.trim().split('\n')).toHaveLength(2);
      await run(['uninstall', 'wk', '-n', ns, '--wait', '--timeout', '120s']);
      const gone = await clusterKubectl(m).run(['get', 'deployment', 'x', '-n', ns]);
      expect(gone.stderr).toContain('NotFound');
    } finally {
      helm.close();
    }
  }, 600_000);

  it('leader election over a Lease at the root of the Karmada-mode worker, with failover', async () => {
    const { kc } = clientNode(karmada.server, { ca: serving.cert, token: TOKEN });
    const api = kc.makeApiClient(k8s.CoordinationV1Api);
    const cands = ['a', 'b', 'c'].map((id) => new Candidate(id, api, ns, 'wlock', 3, 300));
    try {
      for (const c of cands) c.start();
      await until('a leader', async () => (cands.some((c) => c.leading) ? true : undefined), 30_000);
      await new Promise((r) => setTimeout(r, 2_000));
      const first = cands.filter((c) => c.leading);
      expect(first).toHaveLength(1);
      first[0]!.stop();
      await until(
        'a new leader',
        async () => (cands.some((c) => c !== first[0] && c.leading) ? true : undefined),
        30_000,
      );
      const lease = JSON.parse(
        await ok(clusterKubectl(b.karmadaApiserver), ['get', 'lease', 'wlock', '-n', ns, '-o', 'json']),
      );
      expect(lease.spec.holderIdentity).not.toBe(first[0]!.id);
      expect(lease.spec.leaseTransitions).toBe(1);
    } finally {
      for (const c of cands) c.stop();
    }
  }, 120_000);
  it('client-node informer at the root of the Karmada-mode worker: synced, then changes in two members seen once', async () => {
    const [m1, m2] = members;
    const { kc, core } = clientNode(karmada.server, { ca: serving.cert, token: TOKEN });
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${ns}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace: ns }),
    );
    const events: string[] = [];
    for (const verb of ['add', 'update', 'delete'] as const)
      informer.on(verb, (o) => {
        if (o.metadata?.name?.startsWith('inf-')) events.push(`${verb} ${o.metadata.name}`);
      });
    await informer.start();
    try {
      await until('the informer synced', async () =>
        informer.list().some((o) => o.metadata?.name === `kube-root-ca.crt.clusterspace.${m2.name}`)
          ? true
          : undefined,
      );
      await ok(clusterKubectl(m1), ['create', 'configmap', 'inf-a', '-n', ns]);
      await ok(clusterKubectl(m2), ['create', 'configmap', 'inf-b', '-n', ns]);
      await ok(clusterKubectl(m2), ['delete', 'configmap', 'inf-b', '-n', ns]);
      await until('three changes', async () => (events.length >= 3 ? true : undefined), 60_000);
      await new Promise((r) => setTimeout(r, 3_000));
      expect(events.sort()).toEqual(
        [
          `add inf-a.clusterspace.${m1.name}`,
          `add inf-b.clusterspace.${m2.name}`,
          `delete inf-b.clusterspace.${m2.name}`,
        ].sort(),
      );
    } finally {
      await informer.stop();
    }
  }, 180_000);

  it('the Python client at the root of the Karmada-mode worker: list, read, watch, create by fleet name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'real-wpy-'));
    writeFileSync(join(dir, 'ca.pem'), serving.cert);
    const made = `made-w.clusterspace.${members[0].name}`;
    const py = startPythonClient([karmada.server, ns, made], {
      ...process.env,
      FLEET_CA_FILE: join(dir, 'ca.pem'),
      FLEET_TOKEN: TOKEN,
      FLEET_WATCH_SECONDS: '90',
    });
    await Promise.race([py.watching, py.exited]);
    await Promise.all(
      members.map((m) => ok(clusterKubectl(m), ['create', 'configmap', `wfrom-${m.name}`, '-n', ns])),
    );
    expect(await py.exited, py.err()).toBe(0);
    const r = JSON.parse(py.out());
    expect(r.pods.filter((x: string) => x.startsWith(`${ns}/`)).sort()).toEqual(
      members.map((m) => `${ns}/${pods.get(m.name)}.clusterspace.${m.name}`).sort(),
    );
    expect(r.read.name).toBe(`${pods.get(members[1].name)}.clusterspace.${members[1].name}`);
    expect(new Set(r.events.map((e: { name: string }) => e.name))).toEqual(
      new Set(members.map((m) => `wfrom-${m.name}.clusterspace.${m.name}`)),
    );
    expect(r.created.name).toBe(made);
    const real = JSON.parse(
      await ok(clusterKubectl(members[0]), ['get', 'configmap', 'made-w', '-n', ns, '-o', 'json']),
    );
    expect(real.metadata.uid).toBe(r.created.uid);
  }, 180_000);
});
