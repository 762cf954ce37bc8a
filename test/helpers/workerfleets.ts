/**
 * Workerd fleets over one simulated member (`member1`, under a simulated Karmada): for test files that
 * start one worker per configuration they try (how workerd answers a configuration), each its own
 * miniflare, all stopped after the file's tests with the simulated clusters.
 */
import { afterAll, beforeAll } from 'vitest';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { type RunningFleet, startWorkerFleet } from './fleet.ts';

export interface WorkerFleets {
  /** the simulated Karmada and member (started before the file's tests) */
  readonly sims: ServedSimFleet;
  /** a workerd fleet with `config` (FLEET_CONFIG's text); its URL */
  start(config: string): Promise<string>;
}

/** Registers the file's beforeAll/afterAll; call at the top level of a test file. */
export function workerFleetsOverOneMember(): WorkerFleets {
  let sims: ServedSimFleet | undefined;
  const running: RunningFleet[] = [];
  beforeAll(async () => {
    sims = await startSimFleet({ members: ['member1'] });
  });
  afterAll(async () => {
    await Promise.all(running.map((f) => f.stop()));
    await sims?.close();
  });
  return {
    get sims() {
      if (!sims) throw new Error('the simulated fleet starts in beforeAll');
      return sims;
    },
    async start(config) {
      const f = await startWorkerFleet(config);
      running.push(f);
      return f.url;
    },
  };
}
