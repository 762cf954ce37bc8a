/**
 * What the suites against the real bed know about it (provided by test/real/global-setup.ts), and kubectl
 * bound to a fleet or to one member directly.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { inject } from 'vitest';
import { httpsRequest } from '../../testbed/process.ts';
import { Kubectl } from '../helpers/kubectl.ts';

export interface ClusterInfo {
  name: string;
  url: string;
  /** the cluster CA, PEM */
  ca: string;
  /** a system:masters kubeconfig for this cluster itself (not through any fleet), and its certificate */
  kubeconfig: string;
  admin: { cert: string; key: string };
  /** the certificate the fleets call this cluster with (user fleet-apiserver, the README's rights only) */
  fleet: { cert: string; key: string };
  /** the line every container's log holds in this cluster (kwok's ClusterLogs) */
  logLine: string;
  /** the file kwok serves as every container's log and attach stream (CRI log format; '' if none) */
  logsFile: string;
  /** the fleet's own client certificate in this cluster (CN fleet-apiserver, the README's rights) */
  fleetCert: { cert: string; key: string };
}

export interface FleetInfo {
  name: string;
  url: string;
  kubeconfig: string;
}

export interface BedInfo {
  /** clusterProfiles: members from ClusterProfiles in karmada-apiserver (testbed/clusterprofiles.ts) */
  fleets: { direct: FleetInfo; karmada: FleetInfo; clusterProfiles?: FleetInfo };
  /** the CA of the fleets' serving certificates and of their users' client certificates, PEM */
  fleetCA: string;
  /** the bed's admin user (CN bed-admin, O system:masters), accepted by every fleet */
  admin: { cert: string; key: string };
  /** client certificates of the suites' other users (CN = the key; global-setup.ts names their groups), accepted by every fleet */
  users: Record<string, { cert: string; key: string }>;
  members: ClusterInfo[];
  karmadaApiserver: ClusterInfo;
  /** the one etcd every apiserver of the bed stores in (plain HTTP client URL; its JSON gateway at /v3/) */
  etcdUrl: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    bed: BedInfo;
  }
}

export function bed(): BedInfo {
  return inject('bed');
}

/** kubectl through one of the bed's fleets, as the bed's admin user. */
export function fleetKubectl(fleet: FleetInfo): Kubectl {
  const b = bed();
  return new Kubectl(fleet.url, { caPem: b.fleetCA, clientCert: b.admin.cert, clientKey: b.admin.key });
}

/** kubectl straight to one cluster with its admin kubeconfig (to arrange and check what the fleet did). */
export function clusterKubectl(cluster: ClusterInfo): Kubectl {
  return new Kubectl(cluster.url, {
    caPem: cluster.ca,
    clientCert: cluster.admin.cert,
    clientKey: cluster.admin.key,
  });
}

/** kubectl that must succeed: its stdout, or an error with its exit code and output. */
export async function ok(k: Kubectl, args: string[], stdin?: string): Promise<string> {
  const r = await k.run(args, { stdin, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} (exit ${r.code}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/**
 * Creates namespace `ns` in each of `clusters`, where it is not there already: Karmada's namespace sync
 * copies one made in karmada-apiserver into every member, so a member may have it first.
 */
export async function ensureNamespace(clusters: ClusterInfo[], ns: string): Promise<void> {
  for (const c of clusters) {
    const r = await clusterKubectl(c).run(['create', 'namespace', ns], { timeoutMs: 60_000 });
    if (r.code !== 0 && !r.stderr.includes('AlreadyExists'))
      throw new Error(`kubectl create namespace ${ns} in ${c.name} (exit ${r.code}):\n${r.stderr}`);
  }
}

/** Polls `f` every 0.5 s until it returns a value; fails after `timeoutMs` with the last error. */
export async function until<T>(
  what: string,
  f: () => Promise<T | undefined>,
  timeoutMs = 90_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await f();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not reached in ${timeoutMs} ms (${String(last ?? '')})`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * `kubectl port-forward <pod> 0:80` through `k`, then a GET of `/healthz` on the forwarded port: kwok
 * forwards a pod's port to its own server, which speaks TLS with the member's certificate (`ca`) and
 * answers `ok`. The forward is stopped before this resolves.
 */
export async function forwardedHealthz(
  k: Kubectl,
  pod: string,
  ns: string,
  ca: string,
): Promise<{ status: number; body: string }> {
  const pf = k.spawn(['port-forward', pod, '-n', ns, '0:80']);
  try {
    const port = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(
      await pf.waitFor(/Forwarding from 127\.0\.0\.1:\d+/),
    )![1];
    return await httpsRequest(`https://127.0.0.1:${port}/healthz`, { ca });
  } finally {
    pf.stop();
  }
}

/** `kubectl exec <pod> -- sh -c 'echo <word>'` through `k`: what the command printed, trimmed. */
export async function execEcho(k: Kubectl, pod: string, ns: string, word: string): Promise<string> {
  return (await ok(k, ['exec', pod, '-n', ns, '--', 'sh', '-c', `echo ${word}`])).trim();
}

/**
 * `kubectl attach <pod>` through `k` until a fresh line written to the member's container log comes
 * through: kwok attaches to the log file from its end (tail 0, follow), so the line is written again until
 * it shows. The attach is stopped before this resolves.
 */
export async function attachSeesLine(k: Kubectl, pod: string, ns: string, logsFile: string): Promise<void> {
  const a = k.spawn(['attach', pod, '-n', ns]);
  try {
    const line = `attached-${randomBytes(3).toString('hex')}`;
    await until('a line through attach', async () => {
      appendFileSync(logsFile, `${new Date().toISOString()} stdout F ${line}\n`);
      return a.output().includes(line) ? true : undefined;
    });
  } finally {
    a.stop();
  }
}

/** The name of a Running pod in `ns` as `k` (a member's own kubectl) lists it, once there is one. */
export function runningPod(k: Kubectl, ns: string, what: string): Promise<string> {
  return until(what, async () => {
    const out = await ok(k, [
      'get',
      'pods',
      '-n',
      ns,
      '-o',
      'jsonpath={range .items[?(@.status.phase=="Running")]}{.metadata.name}{"\\n"}{end}',
    ]);
    return out.trim().split('\n').filter(Boolean)[0];
  });
}
