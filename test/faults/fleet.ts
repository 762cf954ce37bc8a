/**
 * A fleet (Node or workerd) whose clusters are reached through fault proxies, so a test can say
 * "member2's next watch is cut after 1 initial event" and see what reached each cluster.
 *
 * - `static` membership: one proxy per member (each member's `server` is its proxy) and one in front of
 *   the control plane;
 * - `karmada` membership: one proxy in front of the control plane; members are reached through its
 *   cluster proxy (`/apis/cluster.karmada.io/v1alpha1/clusters/<name>/proxy/...`), and a member's rules
 *   and requests are that path prefix's, with the prefix taken off (rules read as for a member URL).
 */
import { type ServedSimFleet, type SimFleetOptions, startSimFleet } from '../../deploy/node/demo.ts';
import type { FleetConfigInput } from '../../src/config/schema.ts';
import { type RunningFleet, type Runtime, type StartOptions, startFleet } from '../helpers/fleet.ts';
import type { Fault } from './faults.ts';
import {
  type FaultProxy,
  type Match,
  matches,
  type RecordedRequest,
  type RuleHandle,
  startFaultProxy,
} from './proxy.ts';

export type Membership = 'static' | 'karmada';

export interface FaultFleetOptions {
  membership?: Membership;
  sim?: SimFleetOptions;
  /** more fleet configuration (timeouts, authentication, …) */
  config?: Partial<FleetConfigInput>;
  /** per-member endpoint fields (static membership), e.g. `{ timeoutSeconds: 2 }` */
  memberEndpoint?: Record<string, unknown>;
  /** the proxies gzip responses for clients that accept it, as kube-apiserver does */
  gzip?: boolean;
  start?: StartOptions;
}

export interface ClusterTap {
  /** a fault for requests to this cluster matching `m` (paths as on the cluster's own URL) */
  on(m: Match, fault: Fault, count?: { nth?: number; times?: number }): RuleHandle;
  /** requests that reached the proxy for this cluster, paths as on the cluster's own URL */
  requests(): RecordedRequest[];
}

export interface FaultFleet {
  runtime: Runtime;
  membership: Membership;
  sims: ServedSimFleet;
  fleet: RunningFleet;
  url: string;
  /** `karmada` is the control plane (its own API, not the cluster proxy) */
  cluster(name: string): ClusterTap;
  proxies: FaultProxy[];
  /** remove every rule and forget every recorded request */
  reset(): void;
  stop(): Promise<void>;
}

export const clusterProxyPrefix = (name: string) =>
  `/apis/cluster.karmada.io/v1alpha1/clusters/${name}/proxy`;

export async function startFaultFleet(runtime: Runtime, opts: FaultFleetOptions = {}): Promise<FaultFleet> {
  const membership = opts.membership ?? 'static';
  const sims = await startSimFleet(opts.sim);
  const proxyOpts = { gzip: !!opts.gzip };
  const control = await startFaultProxy(sims.karmadaUrl, proxyOpts);
  const memberProxies = new Map<string, FaultProxy>();
  if (membership === 'static')
    for (const [name, url] of sims.memberUrls) memberProxies.set(name, await startFaultProxy(url, proxyOpts));

  const base: FleetConfigInput =
    membership === 'static'
      ? sims.staticConfig({
          members: {
            mode: 'static',
            clusters: [...memberProxies].map(([name, p]) => ({
              name,
              server: p.url,
              token: 'fleet-demo-token',
              ...opts.memberEndpoint,
            })),
          },
        })
      : sims.karmadaConfig();
  const config = {
    ...base,
    controlPlane: { ...(base.controlPlane as object), server: control.url },
    ...opts.config,
  } as FleetConfigInput;
  const fleet = await startFleet(runtime, config, opts.start);

  const tap = (name: string): ClusterTap => {
    const direct = name === 'karmada' ? control : memberProxies.get(name);
    if (direct) {
      const isCp = name === 'karmada' && membership === 'karmada';
      // the control plane's own API: never its cluster proxy paths (those are the members')
      const own = (r: RecordedRequest) =>
        !isCp || !r.path.startsWith('/apis/cluster.karmada.io/v1alpha1/clusters/');
      return {
        on: (m, fault, count = {}) => direct.add({ when: (r) => own(r) && matches(m, r), fault, ...count }),
        requests: () => direct.requests.filter(own),
      };
    }
    if (membership !== 'karmada' || !sims.members.has(name)) throw new Error(`no cluster ${name}`);
    const prefix = clusterProxyPrefix(name);
    const strip = (r: RecordedRequest): RecordedRequest | undefined =>
      r.path.startsWith(`${prefix}/`)
        ? { ...r, path: r.path.slice(prefix.length), url: r.url.slice(prefix.length) }
        : undefined;
    return {
      on: (m, fault, count = {}) =>
        control.add({
          when: (r) => {
            const s = strip(r);
            return !!s && matches(m, s);
          },
          fault,
          ...count,
        }),
      requests: () => control.requests.map(strip).filter((r): r is RecordedRequest => !!r),
    };
  };
  const proxies = [control, ...memberProxies.values()];
  return {
    runtime,
    membership,
    sims,
    fleet,
    url: fleet.url,
    cluster: tap,
    proxies,
    reset() {
      for (const p of proxies) p.clear();
    },
    async stop() {
      await fleet.stop();
      await Promise.all(proxies.map((p) => p.close()));
      await sims.close();
    },
  };
}

/** wait on a condition (never a fixed sleep) */
export async function until(cond: () => boolean, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what} not met in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
