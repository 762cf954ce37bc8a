/**
 * Real Kubernetes processes on loopback, built by testbed/build.ts: etcd, kube-apiserver (TLS, client
 * certificates, a service-account key, a front-proxy CA for aggregation), kube-controller-manager,
 * kube-scheduler and kwok (fake nodes and pod lifecycles, and the kubelet's logs/exec/attach/port-forward).
 *
 * Each process: free loopback ports picked by the OS, its log under .cache/testbed/run/<name>/, ready
 * when its health endpoint answers, stopped with its process group by stop() or when Node exits.
 * The flag sets were chosen after reading how controller-runtime's envtest and kwokctl's binary runtime
 * start a loopback control plane; see testbed/README.md for why each non-default flag is there.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type CertificateAuthority,
  createCA,
  fileSafe,
  type IssuedPair,
  serviceAccountKeys,
  writeKubeconfig,
} from './pki.ts';
import {
  binary,
  freePort,
  httpsRequest,
  type Proc,
  RUN_DIR,
  startProcess,
  waitHealthy,
  waitUntil,
} from './process.ts';

/** Certificates last as long as a long demo session; every start makes new ones. */
const DAYS = 30;

/** A process's run directory, emptied first: every start is a fresh cluster (no data, keys or logs kept). */
export function freshDir(name: string): string {
  const dir = join(RUN_DIR, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface Etcd {
  name: string;
  /** the client URL (plain HTTP on loopback) */
  url: string;
  dir: string;
  proc: Proc;
  stop(): Promise<void>;
}

export async function startEtcd(opts: { name?: string } = {}): Promise<Etcd> {
  const name = opts.name ?? 'etcd';
  const dir = freshDir(name);
  const [client, peer] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const proc = startProcess({
    name,
    bin: binary('etcd'),
    dir,
    args: [
      `--name=${name}`,
      `--data-dir=${join(dir, 'data')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=${name}=${peerUrl}`,
      // a test bed's data dies with it: no fsync keeps a busy disk from stalling every write
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
  });
  await waitUntil(proc, `${name} ${url}/health`, async () => {
    const r = await httpsRequest(`${url}/health`, {});
    return r.status === 200 && r.body.includes('"true"');
  });
  return { name, url, dir, proc, stop: proc.stop };
}

/** The credentials of one cluster: its CA, front-proxy CA and service-account key, all under `dir`. */
export interface ClusterPki {
  dir: string;
  /** signs the apiserver's serving certificate and every client certificate it accepts */
  ca: CertificateAuthority;
  /** the requestheader CA: aggregated apiservers trust the apiserver's proxy client through it */
  frontProxyCA: CertificateAuthority;
  frontProxyClient: IssuedPair;
  serving: IssuedPair;
  serviceAccount: { keyFile: string; publicFile: string };
  /** a client certificate signed by the cluster CA, written under the cluster's pki directory */
  client(user: string, groups?: string[]): IssuedPair;
}

export function clusterPki(name: string, dir: string): ClusterPki {
  const ca = createCA(dir, `${name}-ca`, { days: DAYS });
  const frontProxyCA = createCA(dir, `${name}-front-proxy-ca`, { days: DAYS, file: 'front-proxy-ca' });
  return {
    dir,
    ca,
    frontProxyCA,
    frontProxyClient: frontProxyCA.client('front-proxy-client', [], { name: 'front-proxy-client' }),
    serving: ca.serving('apiserver', {
      cn: name,
      dns: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
    }),
    serviceAccount: serviceAccountKeys(dir),
    client: (user, groups = []) => ca.client(user, groups, { name: fileSafe(user), days: DAYS }),
  };
}

export interface Apiserver {
  name: string;
  /** https://127.0.0.1:<port> */
  url: string;
  /** the cluster CA, PEM (verifies the serving certificate) */
  ca: string;
  /** a kubeconfig file for a system:masters client certificate */
  adminKubeconfig: string;
  admin: IssuedPair;
  pki: ClusterPki;
  etcdPrefix: string;
  dir: string;
  proc: Proc;
  /** a kubeconfig file for `user` (client certificate signed by the cluster CA) */
  kubeconfigFor(user: string, groups?: string[]): string;
  /** one request as the admin; resolves with status and body text */
  request(path: string, opts?: { method?: string; body?: unknown; contentType?: string }): Promise<Res>;
  stop(): Promise<void>;
}

export interface Res {
  status: number;
  body: string;
}

type Api = Pick<Apiserver, 'name' | 'request'>;
/** An object to create: a name, and whatever else the API takes. */
export type KubeObject = { metadata: { name: string; [field: string]: unknown }; [field: string]: unknown };

/** A request as the admin that must succeed (2xx): its JSON body, or an error naming the cluster and the answer. */
export async function must(
  api: Api,
  path: string,
  opts: { method?: string; body?: unknown; contentType?: string } = {},
): Promise<any> {
  const r = await api.request(path, opts);
  if (r.status < 200 || r.status > 299)
    throw new Error(`${api.name}: ${opts.method ?? 'GET'} ${path}: ${r.status} ${r.body.slice(0, 500)}`);
  return r.body ? JSON.parse(r.body) : undefined;
}

/** Creates an object unless it exists already (201, or 409 AlreadyExists); anything else throws. */
export async function ensureObject(api: Api, collection: string, body: KubeObject): Promise<void> {
  const r = await api.request(collection, { method: 'POST', body });
  if (r.status !== 201 && r.status !== 409)
    throw new Error(
      `${api.name}: POST ${collection} ${body.metadata.name}: ${r.status} ${r.body.slice(0, 500)}`,
    );
}

/** Server-side apply by the bed (field manager fleet-testbed, conflicts forced). */
export function applyObject(api: Api, path: string, body: unknown): Promise<any> {
  return must(api, `${path}?fieldManager=fleet-testbed&force=true`, {
    method: 'PATCH',
    body,
    contentType: 'application/apply-patch+yaml',
  });
}

export async function startApiserver(opts: {
  name: string;
  etcd: Etcd;
  extraArgs?: string[];
}): Promise<Apiserver> {
  const { name, etcd } = opts;
  const dir = freshDir(name);
  const pki = clusterPki(name, join(dir, 'pki'));
  const admin = pki.client('bed-admin', ['system:masters']);
  const kubeletClient = pki.client('kube-apiserver-kubelet-client', ['system:masters']);
  const port = await freePort();
  const url = `https://127.0.0.1:${port}`;
  const etcdPrefix = `/${name}`;
  const proc = startProcess({
    name: 'kube-apiserver',
    bin: binary('kube-apiserver'),
    dir,
    args: [
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${join(dir, 'cert-dir')}`,
      `--etcd-servers=${etcd.url}`,
      // one etcd for every apiserver of the bed, each under its own prefix
      `--etcd-prefix=${etcdPrefix}`,
      `--tls-cert-file=${pki.serving.certFile}`,
      `--tls-private-key-file=${pki.serving.keyFile}`,
      `--client-ca-file=${pki.ca.certFile}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccount.publicFile}`,
      `--service-account-signing-key-file=${pki.serviceAccount.keyFile}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      '--allow-privileged=true',
      // aggregation: the apiserver proxies to aggregated apiservers as front-proxy-client
      `--requestheader-client-ca-file=${pki.frontProxyCA.certFile}`,
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--proxy-client-cert-file=${pki.frontProxyClient.certFile}`,
      `--proxy-client-key-file=${pki.frontProxyClient.keyFile}`,
      // logs/exec/port-forward reach kwok's kubelet server at the node's InternalIP (a kwok node's
      // Hostname address does not resolve)
      `--kubelet-client-certificate=${kubeletClient.certFile}`,
      `--kubelet-client-key=${kubeletClient.keyFile}`,
      '--kubelet-preferred-address-types=InternalIP',
      '--profiling=false',
      ...(opts.extraArgs ?? []),
    ],
  });
  const tls = { ca: pki.ca.cert, cert: admin.cert, key: admin.key };
  await waitHealthy(proc, `${url}/readyz`, tls, 180_000);
  const kubeconfigFor = (user: string, groups: string[] = []) =>
    writeKubeconfig(join(dir, `${fileSafe(user)}.kubeconfig`), {
      server: url,
      ca: pki.ca.cert,
      client: pki.client(user, groups),
      name,
    });
  const adminKubeconfig = writeKubeconfig(join(dir, 'admin.kubeconfig'), {
    server: url,
    ca: pki.ca.cert,
    client: admin,
    name,
  });
  return {
    name,
    url,
    ca: pki.ca.cert,
    adminKubeconfig,
    admin,
    pki,
    etcdPrefix,
    dir,
    proc,
    kubeconfigFor,
    request: (path, o = {}) =>
      httpsRequest(`${url}${path}`, tls, {
        method: o.method,
        body: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
        contentType: o.contentType,
      }),
    stop: proc.stop,
  };
}

/** A component's own serving port and the flags every kube component shares for it. */
async function componentServing(dir: string, kubeconfig: string): Promise<{ port: number; args: string[] }> {
  const port = await freePort();
  return {
    port,
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--cert-dir=${join(dir, 'cert-dir')}`,
      // one replica each: no wait for a lease
      '--leader-elect=false',
    ],
  };
}

/** kube-controller-manager for `api`; `extraArgs` add to (or, like --controllers, narrow) its flags. */
export async function startControllerManager(api: Apiserver, extraArgs: string[] = []): Promise<Proc> {
  const dir = join(api.dir, 'kube-controller-manager');
  const kubeconfig = api.kubeconfigFor('system:kube-controller-manager');
  const serving = await componentServing(dir, kubeconfig);
  const proc = startProcess({
    name: 'kube-controller-manager',
    bin: binary('kube-controller-manager'),
    dir,
    args: [
      ...serving.args,
      `--service-account-private-key-file=${api.pki.serviceAccount.keyFile}`,
      `--root-ca-file=${api.pki.ca.certFile}`,
      '--use-service-account-credentials=true',
      `--cluster-signing-cert-file=${api.pki.ca.certFile}`,
      `--cluster-signing-key-file=${api.pki.ca.keyFile}`,
      '--profiling=false',
      ...extraArgs,
    ],
  });
  await waitHealthy(proc, `https://127.0.0.1:${serving.port}/healthz`, {});
  return proc;
}

export async function startScheduler(api: Apiserver): Promise<Proc> {
  const dir = join(api.dir, 'kube-scheduler');
  const kubeconfig = api.kubeconfigFor('system:kube-scheduler');
  const serving = await componentServing(dir, kubeconfig);
  const proc = startProcess({
    name: 'kube-scheduler',
    bin: binary('kube-scheduler'),
    dir,
    args: [...serving.args, '--profiling=false'],
  });
  await waitHealthy(proc, `https://127.0.0.1:${serving.port}/healthz`, {});
  return proc;
}

/** What kwok's fake kubelet answers: the text `kubectl logs` shows, and the port `port-forward` reaches. */
export interface Kwok {
  proc: Proc;
  /** kwok's own server (the fake kubelet's port of every node it manages) */
  port: number;
  nodes: string[];
  /** the file every container's log is read from, in the CRI log format (kwok follows it) */
  logsFile: string;
  /** the one line that file starts with: what `kubectl logs` shows for any pod of this cluster */
  logLine: string;
  stop(): Promise<void>;
}

/** kwok's stages (node and pod lifecycle, fast), read from the kwok module the bed built. */
function kwokStages(moduleDir: string): string[] {
  const stageDir = join(moduleDir, 'kustomize', 'stage');
  const docs: string[] = [];
  for (const sub of ['node/fast', 'node/heartbeat-with-lease', 'pod/fast']) {
    for (const f of readdirSync(join(stageDir, sub)).sort()) {
      if (f.endsWith('.yaml') && f !== 'kustomization.yaml')
        docs.push(readFileSync(join(stageDir, sub, f), 'utf8'));
    }
  }
  return docs;
}

export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

/**
 * kwok for one apiserver: `nodes` fake nodes (Ready through kwok's stages), pods on them Running, and
 * the kubelet's endpoints answered: logs from one file, exec running the command on this host, attach
 * from the same file, port-forward to kwok's own port.
 */
export async function startKwok(
  api: Apiserver,
  opts: { nodes?: string[]; kwokModuleDir: string },
): Promise<Kwok> {
  const dir = join(api.dir, 'kwok');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const serving = api.pki.ca.serving('kwok-serving', { cn: `${api.name}-kwok` });
  const logsFile = join(dir, 'container.log');
  const logLine = `hello from ${api.name}`;
  // the CRI log format kwok parses, as a kubelet's container runtime writes it
  writeFileSync(logsFile, `${new Date().toISOString()} stdout F ${logLine}\n`);
  const rules = [
    { kind: 'ClusterLogs', metadata: { name: 'logs' }, spec: { logs: [{ logsFile, follow: true }] } },
    { kind: 'ClusterAttach', metadata: { name: 'attach' }, spec: { attaches: [{ logsFile }] } },
    { kind: 'ClusterExec', metadata: { name: 'exec' }, spec: { execs: [{ local: { workDir: dir } }] } },
    {
      kind: 'ClusterPortForward',
      metadata: { name: 'port-forward' },
      spec: { forwards: [{ target: { port, address: '127.0.0.1' } }] },
    },
  ].map((r) => JSON.stringify({ apiVersion: 'kwok.x-k8s.io/v1alpha1', ...r }));
  const config = join(dir, 'kwok.yaml');
  writeFileSync(config, `${[...kwokStages(opts.kwokModuleDir), ...rules].join('\n---\n')}\n`);
  const proc = startProcess({
    name: 'kwok',
    bin: binary('kwok'),
    dir,
    args: [
      `--kubeconfig=${api.adminKubeconfig}`,
      `--config=${config}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
      '--node-ip=127.0.0.1',
      `--node-port=${port}`,
      `--server-address=127.0.0.1:${port}`,
      `--tls-cert-file=${serving.certFile}`,
      `--tls-private-key-file=${serving.keyFile}`,
      '--node-lease-duration-seconds=40',
    ],
  });
  await waitHealthy(proc, `https://127.0.0.1:${port}/healthz`, {});
  const nodes = opts.nodes ?? [`${api.name}-node-1`];
  for (const node of nodes)
    await ensureObject(api, '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: node,
        annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
        labels: { type: 'kwok', 'kubernetes.io/hostname': node, 'kubernetes.io/os': 'linux' },
      },
    });
  await waitUntil(proc, `${api.name}: nodes Ready`, async () => {
    const r = await api.request('/api/v1/nodes');
    const items = (JSON.parse(r.body).items ?? []) as {
      status?: { conditions?: { type: string; status: string }[] };
    }[];
    const ready = items.filter((n) =>
      n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    );
    return ready.length >= nodes.length;
  });
  return { proc, port, nodes, logsFile, logLine, stop: proc.stop };
}

export interface Member {
  name: string;
  apiserver: Apiserver;
  controllerManager: Proc;
  scheduler: Proc;
  kwok: Kwok;
  stop(): Promise<void>;
}

/** A whole member cluster: kube-apiserver, kube-controller-manager, kube-scheduler and kwok. */
export async function startMember(opts: {
  name: string;
  etcd: Etcd;
  kwokModuleDir: string;
  nodes?: string[];
}): Promise<Member> {
  const apiserver = await startApiserver({ name: opts.name, etcd: opts.etcd });
  const stops: (() => Promise<void>)[] = [apiserver.stop];
  try {
    const controllerManager = await startControllerManager(apiserver);
    stops.unshift(controllerManager.stop);
    const scheduler = await startScheduler(apiserver);
    stops.unshift(scheduler.stop);
    const kwok = await startKwok(apiserver, { kwokModuleDir: opts.kwokModuleDir, nodes: opts.nodes });
    stops.unshift(kwok.stop);
    return {
      name: opts.name,
      apiserver,
      controllerManager,
      scheduler,
      kwok,
      stop: async () => {
        for (const s of stops) await s();
      },
    };
  } catch (e) {
    for (const s of stops) await s();
    throw e;
  }
}
