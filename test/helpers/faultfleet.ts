/**
 * A describe block's fault fleet (test/faults/fleet.ts): started before its tests, its fault rules and
 * recorded requests cleared after each test (unless `resetEach: false`), stopped after all. The object
 * returned stands for the fleet once it runs, so a test file reads `ff.cluster(…)` as with its own.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type FaultFleet, type FaultFleetOptions, startFaultFleet } from '../faults/fleet.ts';
import type { Runtime } from './fleet.ts';

export function useFaultFleet(
  runtime: Runtime,
  opts: FaultFleetOptions = {},
  { resetEach = true }: { resetEach?: boolean } = {},
): FaultFleet {
  let running: FaultFleet | undefined;
  const ff = (): FaultFleet => {
    if (!running) throw new Error('the fault fleet is used before its beforeAll started it');
    return running;
  };
  beforeAll(async () => {
    running = await startFaultFleet(runtime, opts);
  });
  if (resetEach) afterEach(() => running?.reset());
  afterAll(async () => {
    await running?.stop();
  });
  return {
    runtime,
    get membership() {
      return ff().membership;
    },
    get sims() {
      return ff().sims;
    },
    get fleet() {
      return ff().fleet;
    },
    get url() {
      return ff().url;
    },
    get proxies() {
      return ff().proxies;
    },
    cluster: (name) => ff().cluster(name),
    reset: () => ff().reset(),
    stop: () => ff().stop(),
  };
}
