/**
 * The real test bed: one etcd, three member clusters (kube-apiserver 1.35, kube-controller-manager,
 * kube-scheduler, kwok), karmada-apiserver (a kube-apiserver of its own), and fleet-apiservers in front:
 * - `direct`: members listed statically, each reached with its own endpoint and a fleet credential;
 * - `karmada`: configured as the README tells a real user, membership from Karmada's Clusters, members
 *   reached through Karmada's cluster proxy (karmada-aggregated-apiserver, controller-manager, scheduler
 *   and webhook beside karmada-apiserver, the members joined in Push mode: testbed/karmada.ts);
 * - `clusterProfiles` (option): membership from ClusterProfiles in karmada-apiserver as the hub, members
 *   reached at their access provider's server with its token (testbed/clusterprofiles.ts).
 * Every fleet serves TLS and authenticates callers by client certificate (the bed's user CA); the fleet's
 * own credential in every cluster is a certificate bound to a ClusterRole with exactly the rights the
 * README's Security section lists, not system:masters, so RBAC answers as it would for a real user.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNodeFleet } from '../deploy/node/server.ts';
import { type FleetConfigInput, parseConfig } from '../src/config/schema.ts';
import { moduleDir } from './build.ts';
import {
  grantInventoryReader,
  installClusterProfileCrd,
  PROFILE_NAMESPACE,
  PROVIDER,
  publishProfile,
  SECRET_NAMESPACE,
} from './clusterprofiles.ts';
import { grantClusterProxy, joinMember, type Karmada, startKarmada, waitClusterReady } from './karmada.ts';
import {
  type Apiserver,
  type Etcd,
  ensureObject,
  type Member,
  startApiserver,
  startEtcd,
  startMember,
} from './kube.ts';
import { b64, createCA, fileSafe, type IssuedPair, type KeyPair, writeKubeconfig } from './pki.ts';
import { RUN_DIR } from './process.ts';

export interface BedFleet {
  name: string;
  /** https://127.0.0.1:<port> */
  url: string;
  /** the fleet's configuration, as given to the fleet (written beside it as <name>.json) */
  config: FleetConfigInput;
  configFile: string;
  /** a kubeconfig for the bed's user (CN bed-admin, group system:masters) */
  kubeconfig: string;
  stop(): Promise<void>;
}

export interface Bed {
  etcd: Etcd;
  members: Member[];
  karmadaApiserver: Apiserver;
  karmada: Karmada;
  fleets: { direct: BedFleet; karmada: BedFleet; clusterProfiles?: BedFleet };
  /** the CA of every fleet's serving certificate and of the users' client certificates */
  fleetCA: { cert: string; certData: string };
  /** a client certificate the fleets accept: CN = user, one O per group */
  user(user: string, groups?: string[]): KeyPair;
  /** a kubeconfig file for `user` against `fleet` */
  kubeconfigFor(fleet: BedFleet, user: string, groups?: string[]): string;
  /** seconds from startBed() to everything ready */
  startSeconds: number;
  /** resident memory of every bed process (fleets run inside this Node process: counted as its RSS) */
  rssBytes(): { total: number; byProcess: Record<string, number> };
  stop(): Promise<void>;
}

export interface BedOptions {
  /** member names (default member1..member3) */
  members?: string[];
  /** the port of the fleet a user points kubectl at (the Karmada-mode one when present), else OS-picked */
  port?: number;
  /** also publish the members as ClusterProfiles in karmada-apiserver and start a fleet over them */
  clusterProfiles?: boolean;
  log?: (line: string) => void;
}

/** The identity fleet-apiserver calls every cluster with, and the rights the README says it needs. */
export const FLEET_USER = 'fleet-apiserver';
const FLEET_ROLE = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'fleet-apiserver' },
  rules: [
    {
      apiGroups: [''],
      resources: ['users', 'groups', 'serviceaccounts'],
      verbs: ['impersonate'],
    },
    { apiGroups: ['authentication.k8s.io'], resources: ['uids', 'userextras/*'], verbs: ['impersonate'] },
    // --as through the fleet is reviewed on the control plane
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    // members from Karmada's Clusters, reached through its cluster proxy (a no-op in a member)
    { apiGroups: ['cluster.karmada.io'], resources: ['clusters'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['cluster.karmada.io'], resources: ['clusters/proxy'], verbs: ['*'] },
  ],
};

/** Creates (or keeps) the fleet's ClusterRole and its binding to FLEET_USER in one cluster. */
export async function grantFleet(api: Apiserver): Promise<void> {
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'fleet-apiserver' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'fleet-apiserver' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: FLEET_USER }],
  };
  await ensureObject(api, '/apis/rbac.authorization.k8s.io/v1/clusterroles', FLEET_ROLE);
  await ensureObject(api, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', binding);
}

/** Endpoint fields of the fleet configuration for one cluster, with the fleet's own client certificate. */
export function endpointFor(api: Apiserver, fleetCert: IssuedPair) {
  return {
    server: api.url,
    certificateAuthorityData: b64(api.ca),
    clientCertificateData: b64(fleetCert.cert),
    clientKeyData: b64(fleetCert.key),
  };
}

/** An endpoint of the fleet configuration: where a cluster is and how the fleet authenticates there. */
export type EndpointFields = ReturnType<typeof endpointFor> | { server: string };

/**
 * The `direct` fleet's configuration: the control plane, every member listed statically with its own
 * endpoint, users authenticated by client certificates of `clientCAData`. `via` replaces a member's
 * endpoint (test/real/faults.test.ts: the member behind a fault proxy, which holds the credential).
 */
export function staticFleetConfig(opts: {
  controlPlane: EndpointFields;
  members: Array<{ name: string; endpoint: EndpointFields }>;
  clientCAData: string;
  via?: (name: string) => EndpointFields | undefined;
}): FleetConfigInput {
  return {
    controlPlane: opts.controlPlane,
    members: {
      mode: 'static',
      clusters: opts.members.map((m) => ({ name: m.name, ...(opts.via?.(m.name) ?? m.endpoint) })),
    },
    authentication: { x509: { clientCAData: opts.clientCAData } },
  } as FleetConfigInput;
}

/** Starts one fleet-apiserver in this process with `config`, serving TLS, and writes its files. */
export async function startBedFleet(opts: {
  name: string;
  config: FleetConfigInput;
  serving: KeyPair;
  port?: number;
  dir: string;
  userKubeconfig: (url: string) => string;
}): Promise<BedFleet> {
  const configFile = join(opts.dir, `${opts.name}.json`);
  writeFileSync(configFile, `${JSON.stringify(opts.config, null, 2)}\n`, { mode: 0o600 });
  const fleet = await startNodeFleet({
    config: parseConfig(opts.config),
    host: '127.0.0.1',
    port: opts.port ?? 0,
    tls: { cert: opts.serving.cert, key: opts.serving.key },
  });
  const url = fleet.url.replace('localhost', '127.0.0.1');
  return {
    name: opts.name,
    url,
    config: opts.config,
    configFile,
    kubeconfig: opts.userKubeconfig(url),
    stop: () => fleet.stop(500),
  };
}

function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export async function startBed(opts: BedOptions = {}): Promise<Bed> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  const names = opts.members ?? ['member1', 'member2', 'member3'];
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => {});
  };
  try {
    const kwokModuleDir = moduleDir('kwok', 'sigs.k8s.io/kwok');
    const etcd = await startEtcd();
    stops.push(etcd.stop);
    log(`etcd ready at ${etcd.url}`);
    const members: Member[] = [];
    for (const name of names) {
      // one at a time: three apiservers starting together on 2 cores take longer than in turn
      const m = await startMember({ name, etcd, kwokModuleDir });
      stops.push(m.stop);
      members.push(m);
      log(`${name} ready at ${m.apiserver.url} (nodes ${m.kwok.nodes.join(', ')})`);
    }
    const karmadaApiserver = await startApiserver({ name: 'karmada-apiserver', etcd });
    stops.push(karmadaApiserver.stop);
    log(`karmada-apiserver ready at ${karmadaApiserver.url}`);
    const karmada = await startKarmada({ apiserver: karmadaApiserver, etcd });
    stops.push(karmada.stop);
    log(`Karmada ready (cluster API at ${karmada.aggregatedUrl})`);
    for (const m of members) await joinMember(karmada, { name: m.name, apiserver: m.apiserver });
    for (const m of members) await waitClusterReady(karmada, m.name);
    log(`${names.join(', ')} joined in Push mode and Ready`);

    const clusters = [...members.map((m) => m.apiserver), karmadaApiserver];
    for (const api of clusters) await grantFleet(api);

    const dir = join(RUN_DIR, 'fleet');
    mkdirSync(dir, { recursive: true });
    const fleetCA = createCA(dir, 'fleet-ca', { days: 30 });
    const serving = fleetCA.serving('fleet-serving', { cn: 'fleet-apiserver', days: 30 });
    const userPair = (user: string, groups: string[] = []) => {
      const p = fleetCA.client(user, groups, {
        name: `user-${fileSafe(user)}`,
        days: 30,
      });
      return { cert: p.cert, key: p.key };
    };
    const admin = userPair('bed-admin', ['system:masters']);
    const kubeconfigFor = (fleet: { name: string; url: string }, user: string, groups: string[] = []) =>
      writeKubeconfig(join(dir, `${fleet.name}-${fileSafe(user)}.kubeconfig`), {
        server: fleet.url,
        ca: fleetCA.cert,
        client: user === 'bed-admin' ? admin : userPair(user, groups),
        name: fleet.name,
      });
    const fleetCert = (api: Apiserver) => api.pki.client(FLEET_USER);
    const common = {
      authentication: { x509: { clientCAData: fleetCA.certData } },
    };
    const direct = await startBedFleet({
      name: 'direct',
      dir,
      serving,
      config: staticFleetConfig({
        controlPlane: endpointFor(karmadaApiserver, fleetCert(karmadaApiserver)),
        members: members.map((m) => ({
          name: m.name,
          endpoint: endpointFor(m.apiserver, fleetCert(m.apiserver)),
        })),
        clientCAData: fleetCA.certData,
      }),
      userKubeconfig: (url) => kubeconfigFor({ name: 'direct', url }, 'bed-admin'),
    });
    stops.push(direct.stop);
    log(`fleet (direct, static members) ready at ${direct.url}`);

    // the README's "Against a real Karmada": karmada-apiserver's kubeconfig, members from Clusters; its
    // users need clusters/proxy, bound by name (grantClusterProxy)
    await grantClusterProxy(
      karmada,
      members.map((m) => m.apiserver),
      'bed-admin',
    );
    const karmadaFleet = await startBedFleet({
      name: 'karmada',
      dir,
      serving,
      port: opts.port,
      config: {
        controlPlane: {
          kubeconfig: {
            path: writeKubeconfig(join(dir, 'karmada-apiserver.kubeconfig'), {
              server: karmadaApiserver.url,
              ca: karmadaApiserver.ca,
              client: fleetCert(karmadaApiserver),
              name: 'karmada-apiserver',
            }),
          },
        },
        members: { mode: 'karmada' },
        ...common,
      } as FleetConfigInput,
      userKubeconfig: (url) => kubeconfigFor({ name: 'karmada', url }, 'bed-admin'),
    });
    stops.push(karmadaFleet.stop);
    log(`fleet (karmada: Clusters, cluster proxy) ready at ${karmadaFleet.url}`);

    let profilesFleet: BedFleet | undefined;
    if (opts.clusterProfiles) {
      // karmada-apiserver as the inventory hub; the fleet's user there lists profiles and reads their tokens
      await installClusterProfileCrd(karmadaApiserver);
      await grantInventoryReader(karmadaApiserver, FLEET_USER);
      for (const m of members) await publishProfile(karmadaApiserver, m.apiserver);
      profilesFleet = await startBedFleet({
        name: 'clusterprofiles',
        dir,
        serving,
        config: {
          controlPlane: endpointFor(karmadaApiserver, fleetCert(karmadaApiserver)),
          members: {
            mode: 'clusterProfiles',
            namespace: PROFILE_NAMESPACE,
            accessProviders: [{ name: PROVIDER, secretReader: { namespace: SECRET_NAMESPACE } }],
          },
          ...common,
        } as FleetConfigInput,
        userKubeconfig: (url) => kubeconfigFor({ name: 'clusterprofiles', url }, 'bed-admin'),
      });
      stops.push(profilesFleet.stop);
      log(`fleet (clusterprofiles: ClusterProfiles in karmada-apiserver) ready at ${profilesFleet.url}`);
    }

    const procs = () => {
      const out: Record<string, number> = { etcd: etcd.proc.pid };
      for (const m of members) {
        out[`${m.name}/kube-apiserver`] = m.apiserver.proc.pid;
        out[`${m.name}/kube-controller-manager`] = m.controllerManager.pid;
        out[`${m.name}/kube-scheduler`] = m.scheduler.pid;
        out[`${m.name}/kwok`] = m.kwok.proc.pid;
      }
      out['karmada-apiserver'] = karmadaApiserver.proc.pid;
      for (const [name, p] of Object.entries(karmada.procs)) out[name] = p.pid;
      out['node (fleets, this process)'] = process.pid;
      return out;
    };
    return {
      etcd,
      members,
      karmadaApiserver,
      karmada,
      fleets: { direct, karmada: karmadaFleet, ...(profilesFleet ? { clusterProfiles: profilesFleet } : {}) },
      fleetCA: { cert: fleetCA.cert, certData: fleetCA.certData },
      user: userPair,
      kubeconfigFor,
      startSeconds: Math.round((Date.now() - started) / 100) / 10,
      rssBytes: () => {
        const byProcess = Object.fromEntries(Object.entries(procs()).map(([k, pid]) => [k, rssOf(pid)]));
        return { total: Object.values(byProcess).reduce((a, b) => a + b, 0), byProcess };
      },
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
