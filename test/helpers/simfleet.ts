/**
 * `useSimFleet(runtime)`: the end-to-end tests' one fleet setup. In the enclosing `describe` it serves the
 * simulated control plane and members over real HTTP (deploy/node/demo.ts), starts the fleet against them
 * on the given runtime (Node in this process, or the bundled worker in workerd), and tears all of it down
 * afterwards: extra fleets, the fleet, the simulated clusters, whatever `prepare` set up, the kubeconfigs.
 *
 *   const f = useSimFleet(runtime);
 *   it('…', async () => { const r = await f.kubectl().run(['get', 'pods', '-A']); … f.sims.members … });
 *
 * The handle's fields are there once the `beforeAll` it registers has run, i.e. inside tests and later
 * hooks; reading them earlier throws instead of handing out `undefined`.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { type ServedSimFleet, type SimFleetOptions, startSimFleet } from '../../deploy/node/demo.ts';
import type { SimCluster } from '../../sim/index.ts';
import type { FleetConfigInput } from '../../src/config/schema.ts';
import { type RunningFleet, type Runtime, type StartOptions, startFleet } from './fleet.ts';
import { Kubectl, type KubectlAuth } from './kubectl.ts';

export interface SimFleetSetup {
  /** which simulated clusters (default: the demo's control plane and three members, seeded) */
  sims?: SimFleetOptions;
  /**
   * Runs on the served clusters before any fleet starts (seed objects, RBAC, start a token issuer);
   * a function it returns (or resolves to) runs after the clusters are closed.
   */
  prepare?: (sims: ServedSimFleet) => unknown;
  /** the fleet's configuration (default: members from Karmada's Cluster objects, the demo's authentication) */
  config?: (sims: ServedSimFleet) => FleetConfigInput;
  start?: StartOptions;
  /** more fleets on the same clusters, by name (e.g. one in strict mode beside the default) */
  extra?: Record<string, (sims: ServedSimFleet) => FleetConfigInput>;
}

export interface SimFleet {
  readonly runtime: Runtime;
  readonly sims: ServedSimFleet;
  readonly fleet: RunningFleet;
  /** the fleet's URL */
  readonly url: string;
  /** a simulated member by name (throws on a name the fleet does not have) */
  member(name: string): SimCluster;
  /**
   * Brings a member taken down (`faults.down`) back, and waits until the fleet asks it again: with
   * membership from Karmada the fleet skips a Cluster it last saw not Ready until its next refresh.
   */
  memberUp(name: string): Promise<void>;
  /** one of `setup.extra`'s fleets */
  extra(name: string): RunningFleet;
  /** kubectl with its own kubeconfig for `<url><path>` (one per path and credentials, kept for the suite) */
  kubectl(path?: string, auth?: KubectlAuth): Kubectl;
}

export function useSimFleet(runtime: Runtime, setup: SimFleetSetup = {}): SimFleet {
  let sims: ServedSimFleet | undefined;
  let fleet: RunningFleet | undefined;
  const extras = new Map<string, RunningFleet>();
  const kubectls = new Map<string, Kubectl>();
  const cleanups: Array<() => unknown> = [];

  beforeAll(async () => {
    sims = await startSimFleet(setup.sims);
    const cleanup = await setup.prepare?.(sims);
    if (typeof cleanup === 'function') cleanups.push(cleanup as () => unknown);
    fleet = await startFleet(runtime, (setup.config ?? ((s) => s.karmadaConfig()))(sims), setup.start);
    for (const [name, config] of Object.entries(setup.extra ?? {})) {
      extras.set(name, await startFleet(runtime, config(sims), setup.start));
    }
  });

  afterAll(async () => {
    // fleets first, so that no fleet sees its clusters vanish while it still serves; every step runs
    // even when one fails (a leaked server would keep the test process alive), the first failure is thrown
    const steps: Array<() => unknown> = [
      ...[...extras.values()].map((f) => () => f.stop()),
      () => fleet?.stop(),
      () => sims?.close(),
      ...cleanups,
      ...[...kubectls.values()].map((k) => () => rmSync(k.dir, { recursive: true, force: true })),
    ];
    const errors: unknown[] = [];
    for (const step of steps) {
      try {
        await step();
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length) throw errors[0];
  });

  const ready = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`useSimFleet: ${what} is there only once its beforeAll has run`);
    return v;
  };

  return {
    runtime,
    get sims() {
      return ready(sims, 'sims');
    },
    get fleet() {
      return ready(fleet, 'fleet');
    },
    get url() {
      return ready(fleet, 'fleet').url;
    },
    member(name) {
      const m = ready(sims, 'sims').members.get(name);
      if (!m) throw new Error(`useSimFleet: no member ${name}`);
      return m;
    },
    async memberUp(name) {
      this.member(name).faults.down = false;
      // the member's own /version (anyone may read it): 503 from the fleet while it skips the member
      const url = `${ready(fleet, 'fleet').url}/clusterspaces/${name}/version`;
      const deadline = Date.now() + 30_000;
      for (;;) {
        const res = await fetch(url);
        const body = await res.text();
        if (res.ok) return;
        if (Date.now() > deadline)
          throw new Error(
            `useSimFleet: ${name} still not asked after 30 s (${res.status} ${body.slice(0, 200)})`,
          );
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    extra(name) {
      return ready(extras.get(name), `extra fleet ${name}`);
    },
    kubectl(path = '', auth) {
      const key = `${path}\n${JSON.stringify(auth ?? {})}`;
      let k = kubectls.get(key);
      if (!k) {
        k = new Kubectl(`${ready(fleet, 'fleet').url}${path}`, auth);
        kubectls.set(key, k);
      }
      return k;
    },
  };
}
