/**
 * The embedded default: a simulated Karmada control plane and members, each a kube-apiserver-like
 * server on its own loopback port, and the fleet configuration that points at them. Used by `npm start`
 * without configuration, by `npm run dev:worker`, and by the tests.
 */

import { createSimFleet, propagate, type SimCluster, type SimKarmada } from '../../sim/index.ts';
import type { FleetConfigInput } from '../../src/config/schema.ts';
import { type ServedHandle, serveFetch } from './http.ts';
import { serveSimUpgrades } from './sim-upgrade.ts';

export interface SimFleetOptions {
  members?: string[];
  crdMembers?: string[];
  seed?: boolean;
  /**
   * run the simulated Karmada's propagation (sim/propagation.ts) every half second, as its controllers
   * would: the demo's, so a PropagationPolicy a reader applies reaches the members
   */
  propagation?: boolean;
}

export interface ServedSimFleet {
  karmada: SimKarmada;
  members: Map<string, SimCluster>;
  /** the control plane's URL (members are reached through its cluster proxy) */
  karmadaUrl: string;
  /** each member served directly too, for static-membership setups and direct comparisons */
  memberUrls: Map<string, string>;
  /** fleet config for Karmada membership through the cluster proxy */
  karmadaConfig(extra?: Partial<FleetConfigInput>): FleetConfigInput;
  /** fleet config listing the members statically, each at its own URL */
  staticConfig(extra?: Partial<FleetConfigInput>): FleetConfigInput;
  close(): Promise<void>;
}

/**
 * The demo lets anyone in, explicitly: callers act as system:anonymous (group system:unauthenticated) in
 * every simulated cluster, whose RBAC allows everything unless a test gives it rules. A real
 * configuration without authenticators refuses to start (README "Security").
 */
export const DEMO_AUTHENTICATION = { anonymous: { enabled: true } } as const;

/** Serves a simulated cluster; while `faults.down` is set, connections are dropped like a dead host's. */
export async function serveSim(sim: SimCluster, port = 0): Promise<ServedHandle> {
  const h = await serveFetch((req) => sim.fetch(req), { port, admit: () => !sim.faults.down });
  serveSimUpgrades(h.server, sim); // exec, attach, port-forward
  return h;
}

export async function startSimFleet(opts: SimFleetOptions = {}): Promise<ServedSimFleet> {
  const { karmada, members } = createSimFleet(opts);
  const stopPropagation = opts.propagation ? karmada.timer(() => propagate(karmada), 500, true) : () => {};
  const handles: ServedHandle[] = [];
  const kh = await serveSim(karmada);
  handles.push(kh);
  const memberUrls = new Map<string, string>();
  for (const [name, sim] of members) {
    const h = await serveSim(sim);
    handles.push(h);
    memberUrls.set(name, h.url);
  }
  return {
    karmada,
    members,
    karmadaUrl: kh.url,
    memberUrls,
    karmadaConfig: (extra = {}) => ({
      controlPlane: { server: kh.url, token: 'fleet-demo-token' },
      members: { mode: 'karmada', refreshSeconds: 2 },
      authentication: DEMO_AUTHENTICATION,
      ...extra,
    }),
    staticConfig: (extra = {}) => ({
      controlPlane: { server: kh.url, token: 'fleet-demo-token' },
      authentication: DEMO_AUTHENTICATION,
      members: {
        mode: 'static',
        clusters: [...memberUrls].map(([name, server]) => ({ name, server, token: 'fleet-demo-token' })),
      },
      ...extra,
    }),
    async close() {
      stopPropagation();
      for (const sim of [karmada, ...members.values()]) sim.close();
      await Promise.all(handles.map((h) => h.close(500)));
    },
  };
}
