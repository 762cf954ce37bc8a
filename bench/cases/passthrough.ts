/**
 * Per-cluster passthrough (`/clusterspaces/<member>/…`): the fleet as a plain reverse proxy, compared
 * with the member itself and with Go's httputil.ReverseProxy in front of the same member.
 *
 * Both proxies use every core: Go with GOMAXPROCS = cores, the fleet as deployed (`fleet`: the bundled
 * Node entry, one node:cluster worker per core, its CPU summed over the primary and the workers).
 * `fleet-1proc` is the fleet in one process (the harness's fleet helper, the one `--profile` profiles).
 */
import autocannon from 'autocannon';
import type { KubeObject, SimCluster } from '../../sim/index.ts';
import { type FleetProcess, startFleetProcess } from '../lib/fleetproc.ts';
import { GO_PROCS } from '../lib/goproxy.ts';
import { treeCpuMs } from '../lib/treecpu.ts';
import type { BenchCase, BenchEnv, Target, UpstreamContext } from './types.ts';

export const NAMESPACE = 'bench';
const MEMBER = 'member1';
const ACCEPT_JSON = { Accept: 'application/json' };

function member(ctx: UpstreamContext, name = MEMBER): SimCluster {
  const sim = ctx.sims.members.get(name);
  if (!sim) throw new Error(`bench: simulated member ${name} is missing`);
  return sim;
}

function ensureNamespace(sim: SimCluster): void {
  try {
    sim.create(
      { group: '', version: 'v1', resource: 'namespaces' },
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: NAMESPACE, labels: { 'kubernetes.io/metadata.name': NAMESPACE } },
      },
    );
  } catch {
    // already there (another case made it)
  }
}

/** worker processes of the deployed fleet: as many as the Go proxy gets cores */
const FLEET_WORKERS = GO_PROCS;

/**
 * A fleet process is cold when it starts: V8 optimises its code only after thousands of requests (on
 * this busy 2-core machine a lone process needs 10 s or more of load; each of 2 workers gets half of it),
 * which the bench's 1 s warm-up per run does not cover, so round 1 measured the JIT (2–3× the steady CPU
 * per request). Go's proxy is compiled ahead of time and has no such phase. So each fleet as deployed is
 * loaded first, once, before anything is measured, until its CPU per request settles (two steps within
 * 1.2× of each other, at most 40 s), and what each step cost is reported next to the steady figures
 * (the target's note), not left out: `cold` below.
 */
const QUICK = process.argv.includes('--quick');
/** warm-up load in steps of this many seconds, until a step costs ≤ 1.2× the CPU per request of the one before */
const PREWARM_STEP_S = QUICK ? 3 : 4;
const PREWARM_MAX_S = QUICK ? 3 : 40;
const cold = new Map<FleetProcess, string>();

function loadFor(url: string, seconds: number): Promise<number> {
  return new Promise<number>((resolve, reject) =>
    autocannon({ url, connections: 32, duration: seconds, headers: ACCEPT_JSON }, (err, res) =>
      err ? reject(err) : resolve(res.requests?.total ?? 0),
    ),
  );
}

async function prewarm(f: FleetProcess): Promise<void> {
  // any passthrough answer warms the same code (the ConfigMap is made later, by the case's setup)
  const url = `${f.url}/clusterspaces/${MEMBER}/api/v1/namespaces/${NAMESPACE}/configmaps/small`;
  const steps: string[] = [];
  let requests = 0;
  let prev = Number.POSITIVE_INFINITY;
  for (let t = 0; t < PREWARM_MAX_S; t += PREWARM_STEP_S) {
    const c0 = treeCpuMs(f.pid);
    const n = await loadFor(url, PREWARM_STEP_S);
    const c1 = treeCpuMs(f.pid);
    if (c0 === null || c1 === null || n === 0) break;
    const us = ((c1 - c0) * 1000) / n;
    requests += n;
    steps.push(String(Math.round(us)));
    if (us <= prev * 1.2 && us >= prev / 1.2) break;
    prev = us;
  }
  cold.set(
    f,
    `warmed first with ${requests} requests, µs CPU per request by ${PREWARM_STEP_S} s step: ${steps.join(' → ')}`,
  );
}

let everyCore: Promise<FleetProcess> | undefined;
let baseline: Promise<FleetProcess> | undefined;

/**
 * BENCH_BASELINE_BUNDLE=<file>: another build of deploy/node/main.ts (say the commit before a change,
 * bundled with scripts/build-node.mjs), run the same way as `fleet` and measured in the same rounds as
 * `fleet-baseline`: a before/after on a noisy machine without comparing two runs.
 */
function baselineOnEveryCore(env: BenchEnv): Promise<FleetProcess> | undefined {
  const bundle = process.env.BENCH_BASELINE_BUNDLE;
  if (!bundle) return undefined;
  baseline ??= startFleetProcess(env.fleetConfigs.static, {
    bundle,
    env: { FLEET_WORKERS: String(FLEET_WORKERS) },
  }).then(async (f) => {
    process.once('exit', () => f.stop());
    await prewarm(f);
    return f;
  });
  return baseline;
}

/**
 * The production Node entry (bundled, plain node) with one worker per core, started once per harness run
 * and stopped when it exits (fleetproc kills what it started; the workers follow their primary).
 */
function fleetOnEveryCore(env: BenchEnv): Promise<FleetProcess> {
  everyCore ??= startFleetProcess(env.fleetConfigs.static, {
    env: { FLEET_WORKERS: String(FLEET_WORKERS) },
  }).then(async (f) => {
    process.once('exit', () => f.stop());
    await prewarm(f);
    return f;
  });
  return everyCore;
}

/**
 * The same request three (or four) ways: straight to the member, through the Go reference proxy, through
 * the fleet in static mode (both proxies front the member's own URL), and optionally through the fleet in
 * Karmada mode (member reached via the simulated control plane's cluster proxy: one more hop).
 */
export async function passthroughTargets(
  env: BenchEnv,
  kubePath: string,
  headers: Record<string, string> = ACCEPT_JSON,
  memberName = MEMBER,
): Promise<Target[]> {
  const direct = env.memberUrls[memberName];
  if (!direct) throw new Error(`bench: no URL for member ${memberName}`);
  const prefixed = `/clusterspaces/${memberName}${kubePath}`;
  const targets: Target[] = [
    { name: 'direct', url: direct + kubePath, headers, note: `${memberName}'s own URL` },
  ];
  const go = await env.goProxy(memberName);
  if (go)
    targets.push({
      name: 'go',
      url: go.url + prefixed,
      headers,
      proxyPid: go.pid,
      note: `httputil.ReverseProxy → ${memberName}'s own URL`,
    });
  const workers = await fleetOnEveryCore(env);
  targets.push({
    name: 'fleet',
    url: workers.url + prefixed,
    headers,
    proxyCpuMs: () => treeCpuMs(workers.pid),
    note: `fleet as deployed: ${FLEET_WORKERS} worker processes (node:cluster; go: GOMAXPROCS=${GO_PROCS}), static members → ${memberName}'s own URL; ${cold.get(workers) ?? 'not warmed'}`,
  });
  const before = await baselineOnEveryCore(env);
  if (before)
    targets.push({
      name: 'fleet-baseline',
      url: before.url + prefixed,
      headers,
      proxyCpuMs: () => treeCpuMs(before.pid),
      note: `BENCH_BASELINE_BUNDLE (${process.env.BENCH_BASELINE_BUNDLE}), ${FLEET_WORKERS} worker processes; ${cold.get(before) ?? 'not warmed'}`,
    });
  if (env.fleets.static)
    targets.push({
      name: 'fleet-1proc',
      url: env.fleets.static.url + prefixed,
      headers,
      proxyPid: env.fleets.static.pid,
      note: `fleet in one process (the profiled one), static members → ${memberName}'s own URL`,
    });
  if (env.fleets.karmada)
    targets.push({
      name: 'fleet-karmada',
      url: env.fleets.karmada.url + prefixed,
      headers,
      proxyPid: env.fleets.karmada.pid,
      note: `fleet, Karmada members → control plane's cluster proxy → ${memberName}`,
    });
  return targets;
}

export const configmapCase: BenchCase = {
  name: 'passthrough-configmap',
  title: `GET one small ConfigMap through /clusterspaces/${MEMBER}`,
  setup(ctx) {
    const sim = member(ctx);
    ensureNamespace(sim);
    sim.create(
      { group: '', version: 'v1', resource: 'configmaps' },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'small', namespace: NAMESPACE, labels: { app: 'bench' } },
        data: { 'app.properties': 'color=blue\nmode=fast\n', greeting: 'hello' },
      },
    );
  },
  teardown(ctx) {
    member(ctx).remove({ group: '', version: 'v1', resource: 'configmaps' }, NAMESPACE, 'small');
  },
  targets: (env) => passthroughTargets(env, `/api/v1/namespaces/${NAMESPACE}/configmaps/small`),
  prestart: (env) => fleetOnEveryCore(env),
};

export const POD_COUNT = 1000;

/** A pod as a ReplicaSet makes it, with the status a running kubelet reports (≈ 2.5 KB of JSON). */
export function benchPod(i: number): KubeObject {
  const rs = `web-${Math.floor(i / 100)}-7d9f8c6b5`;
  const name = `${rs}-${i.toString(36).padStart(5, 'x')}`;
  const started = new Date(Date.UTC(2026, 0, 1, 0, 0, i % 3600)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: `${rs}-`,
      namespace: NAMESPACE,
      labels: { app: 'web', tier: 'frontend', 'pod-template-hash': '7d9f8c6b5', shard: String(i % 10) },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-01-01T00:00:00Z' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: rs,
          uid: `5b0c6a1e-0000-4000-8000-${String(i).padStart(12, '0')}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'registry.k8s.io/nginx-slim:0.27',
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'LOG_LEVEL', value: 'info' },
          ],
          resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
          readinessProbe: {
            httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' },
            periodSeconds: 10,
            timeoutSeconds: 1,
            successThreshold: 1,
            failureThreshold: 3,
          },
          volumeMounts: [
            {
              name: 'kube-api-access',
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      volumes: [
        {
          name: 'kube-api-access',
          projected: {
            defaultMode: 420,
            sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }],
          },
        },
      ],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: `node-${i % 20}`,
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: [
        'PodReadyToStartContainers',
        'Initialized',
        'Ready',
        'ContainersReady',
        'PodScheduled',
      ].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: started })),
      hostIP: `10.0.${i % 20}.1`,
      podIP: `10.244.${Math.floor(i / 250)}.${(i % 250) + 2}`,
      podIPs: [{ ip: `10.244.${Math.floor(i / 250)}.${(i % 250) + 2}` }],
      startTime: started,
      containerStatuses: [
        {
          name: 'web',
          state: { running: { startedAt: started } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: 'registry.k8s.io/nginx-slim:0.27',
          imageID:
            'registry.k8s.io/nginx-slim@sha256:7a2e7a2a0f4b9b0e4c1e1b9e1f6f7c0d1a2b3c4d5e6f708192a3b4c5d6e7f809',
          containerID: `containerd://${i.toString(16).padStart(64, '0')}`,
          started: true,
        },
      ],
      qosClass: 'Burstable',
    },
  };
}

export const podListCase: BenchCase = {
  name: 'passthrough-podlist',
  title: `LIST ${POD_COUNT} pods (one namespace) through /clusterspaces/${MEMBER}`,
  // 3 MiB answers: at 32 connections none completes within a quick run's 1 s on a loaded 2-core machine
  quick: { connections: 4 },
  prestart: (env) => fleetOnEveryCore(env),
  setup(ctx) {
    const sim = member(ctx);
    ensureNamespace(sim);
    for (let i = 0; i < POD_COUNT; i++)
      sim.create({ group: '', version: 'v1', resource: 'pods' }, benchPod(i));
  },
  teardown(ctx) {
    const sim = member(ctx);
    for (let i = 0; i < POD_COUNT; i++)
      sim.remove({ group: '', version: 'v1', resource: 'pods' }, NAMESPACE, benchPod(i).metadata.name!);
  },
  targets: (env) => passthroughTargets(env, `/api/v1/namespaces/${NAMESPACE}/pods`),
};
