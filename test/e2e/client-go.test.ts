/**
 * Issue 32: the programs Kubernetes developers write, client-go and controller-runtime, against the fleet
 * on Node and in workerd. The Go tests live in their own module (test/clientgo, client-go v0.35 as kubectl
 * 1.35, controller-runtime v0.23); this file builds their test binary once (.cache/clientgo/, cold build
 * measured in docs/client-go.md), and for each runtime starts the simulated fleet, serves a control URL
 * through which the Go side changes the simulated clusters mid-run (test/helpers/simcontrol.ts), and runs
 * each Go test as one vitest test, its subtests named in the failure message. `FLEET_GO` picks the `go`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useFaultFleet } from '../helpers/faultfleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { goTestBinary, goTestList, runGoTest } from '../helpers/gotest.ts';
import { type SimControl, serveSimControl } from '../helpers/simcontrol.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

/** Every Go test, in the order they run: its name, its time budget (ms), its environment */
const CASES: Array<[string, number, Record<string, string>?]> = [
  ['TestTypedByFleetName', 90_000],
  ['TestDynamicWidgets', 60_000],
  ['TestMetadataClientAndInformer', 60_000],
  ['TestDiscoveryAndRESTMapper', 90_000],
  // client-go 1.35 reads its feature gates from KUBE_FEATURE_<gate> once per process
  ['TestSharedInformers', 150_000, { KUBE_FEATURE_WatchListClient: 'true' }],
  ['TestSharedInformers', 150_000, { KUBE_FEATURE_WatchListClient: 'false' }],
  ['TestInformerSoak', 120_000],
  ['TestServerSideApply', 60_000],
  ['TestImpersonate', 30_000],
  ['TestLeaderElection', 90_000],
  ['TestExec', 90_000],
  ['TestPortForward', 90_000],
  ['TestControllerRuntimeManager', 150_000],
];
/** The Go tests run against a fleet whose clusters sit behind fault proxies (test/faults/) */
const FAULT_CASES: Array<[string, number, Record<string, string>?]> = [
  ['TestInformerSoak', 120_000, { FLEET_FAULT_PROXY: '1' }],
];
const caseName = (name: string, env?: Record<string, string>) =>
  env
    ? `${name} ${Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`
    : name;

const BUILD_MS = 1_800_000;

describe('the client-go module', () => {
  it(
    'builds, and holds exactly the Go tests this file runs',
    async () => {
      const { binary, ms, cached } = await goTestBinary();
      if (!cached) console.log(`client-go test binary built in ${(ms / 1000).toFixed(1)} s`);
      expect((await goTestList(binary)).sort()).toEqual(
        [...new Set([...CASES, ...FAULT_CASES].map(([n]) => n))].sort(),
      );
    },
    BUILD_MS,
  );
});

/** Each Go test of `cases` as one vitest test, against the fleet at `url()` with the control URL `control()` */
function goCases(
  runtime: string,
  cases: typeof CASES,
  binary: () => string,
  url: () => string,
  control: () => SimControl,
): void {
  for (const [name, ms, extraEnv] of cases)
    it(
      caseName(name, extraEnv),
      async () => {
        const env = { FLEET_URL: url(), FLEET_CONTROL: control().url, FLEET_RUNTIME: runtime, ...extraEnv };
        const r = await runGoTest(binary(), name, env, ms);
        const subtests = r.subtests.map((s) => `${s.outcome} ${s.name} (${s.elapsed ?? '?'} s)`).join('\n');
        // what a passing test logged (seeds, counts) is worth seeing too
        const logged = r.output.split('\n').filter((l) => /^\s+\w+_test\.go:\d+: /.test(l));
        if (r.outcome === 'pass' && logged.length)
          console.log(`${name} on ${runtime}:\n${logged.join('\n')}`);
        expect(r.outcome, `${name} on ${runtime}:\n${subtests}\n--- output ---\n${r.output}`).toBe('pass');
      },
      ms + 15_000,
    );
}

describe.each(RUNTIMES)('client-go and controller-runtime against the fleet on %s', (runtime) => {
  // the demo's clusters: widgets (a CRD) served by member2 and the control plane only
  const f = useSimFleet(runtime);
  let control: SimControl;
  let binary: string;

  beforeAll(async () => {
    binary = (await goTestBinary()).binary;
    control = await serveSimControl(() => f.sims);
    return () => control.close();
  }, BUILD_MS);

  goCases(
    runtime,
    CASES,
    () => binary,
    () => f.url,
    () => control,
  );
});

describe.each(RUNTIMES)('client-go informers under the fault proxies on %s', (runtime) => {
  const ff = useFaultFleet(runtime, {}, { resetEach: false });
  let control: SimControl;
  let binary: string;

  beforeAll(async () => {
    binary = (await goTestBinary()).binary;
    control = await serveSimControl(
      () => ff.sims,
      (c) => ff.cluster(c),
    );
    return () => control.close();
  }, BUILD_MS);

  goCases(
    runtime,
    FAULT_CASES,
    () => binary,
    () => ff.url,
    () => control,
  );
});
