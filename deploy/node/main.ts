/**
 * `npm start`: the fleet-apiserver on Node.
 *
 *   npm start                          embedded default: simulated control plane + 3 members
 *   npm start -- --config fleet.yaml   a real fleet (YAML or JSON; see README "Configuration")
 *
 * Options: --config FILE (or FLEET_CONFIG), --workers N|auto (or FLEET_WORKERS; default one process per
 * usable CPU with a config, one for the demo), --drain-seconds S (or FLEET_DRAIN_SECONDS; default 10),
 * --federation on|off (the demo only; a configuration says `federation:` itself).
 * Environment: PORT (default 8080), HOST (default 127.0.0.1), FLEET_MEMORY_TUNING=on|off (./memory.ts).
 * An invalid configuration or option stops startup with the offending field named and exit code 2.
 */
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { describeAuthentication } from '../../src/auth/authenticator.ts';
import {
  ConfigError,
  type FleetConfig,
  type FleetConfigInput,
  parseConfig,
} from '../../src/config/schema.ts';
import { parseYaml } from '../../src/util/yaml.ts';
import { startPrimary } from './cluster.ts';
import { startSimFleet } from './demo.ts';
import { applyEngineSettings, describeMemorySettings, memoryTuningOn } from './memory.ts';
import { argValue, demoFederation, drainMs, workerCount } from './options.ts';
import { startNodeFleet } from './server.ts';
import { runWorker } from './worker.ts';

/** The configuration document as written (validated by parseConfig). */
export function loadConfigDocument(path: string): FleetConfigInput {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `${path}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  try {
    return parseYaml(text) as FleetConfigInput;
  } catch (e) {
    throw new ConfigError(`${path}: not valid YAML/JSON: ${(e as Error).message}`);
  }
}

export function loadConfigFile(path: string): FleetConfig {
  return parseConfig(loadConfigDocument(path), path);
}

/** What a newcomer types next: the fleet root first (the headline), one cluster, then kubeconfig. */
export function banner(url: string, member: string): string {
  return `fleet-apiserver listening on ${url}
The whole fleet as one cluster:
  kubectl --server ${url} get pods -A
One cluster of the fleet:
  kubectl --server ${url}/clusterspaces/${member} get pods -A
Contexts fleet, karmada and one per member in your kubeconfig:
  npx fleet-apiserver kubeconfig --server ${url}`;
}

/** a debugging aid for tests only: which worker answered (never on unless the test asks) */
const workerHeader = () => (process.env.FLEET_TEST_WORKER_HEADER === '1' ? String(process.pid) : undefined);

async function main() {
  // V8 flags read when undici first connects (./memory.ts): in the primary, a worker and a single process
  // alike, set before anything connects; the scanner is compiled only where the fleet is served
  if (cluster.isWorker) {
    applyEngineSettings();
    return runWorker(workerHeader());
  }
  const argv = process.argv.slice(2);
  const port = Number(process.env.PORT ?? 8080);
  const host = process.env.HOST ?? '127.0.0.1';
  const path = argValue(argv, 'config', 'FLEET_CONFIG');
  const workers = workerCount(argv, path !== undefined);
  applyEngineSettings(workers === 1);
  const graceMs = drainMs(argv);
  memoryTuningOn();
  let raw: FleetConfigInput;
  let demo: Awaited<ReturnType<typeof startSimFleet>> | undefined;
  if (path) {
    if (argValue(argv, 'federation') !== undefined)
      throw new ConfigError('--federation: for the demo only; a configuration sets `federation:` itself');
    raw = loadConfigDocument(path);
  } else {
    demo = await startSimFleet({ propagation: true });
    raw = { ...demo.karmadaConfig(), ...demoFederation(argv) };
  }
  const source = path ?? 'embedded default';
  const config = parseConfig(raw, source);
  let url: string;
  let stop: () => Promise<void>;
  let sharing: string | undefined;
  if (workers === 1) {
    const fleet = await startNodeFleet({ config, port, host, workerHeader: workerHeader() });
    url = fleet.url;
    stop = () => fleet.stop(graceMs);
  } else {
    const primary = await startPrimary({ workers, raw, source, port, host, graceMs });
    url = primary.url;
    stop = () => primary.stop(graceMs);
    sharing = `fleet-apiserver: ${workers} worker processes (pids ${primary.pids().join(', ')}) share the port`;
  }
  // before anything is printed: a caller that signals as soon as it reads the banner gets a drain
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`fleet-apiserver: ${signal}, draining (up to ${graceMs / 1000} s)`);
    await stop();
    await demo?.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  if (sharing) console.log(sharing);
  console.log(`fleet-apiserver: ${describeMemorySettings(workers > 1)}`);
  const authn = describeAuthentication(config.authentication);
  console.log(
    `fleet-apiserver: authentication: ${authn.join(', ')}; upstream identity: ${config.upstreamIdentity.mode}`,
  );
  if (demo) {
    console.log(
      '  (embedded demo: anonymous access is on, every caller acts as system:anonymous in the simulated clusters)',
    );
    console.log(
      `fleet-apiserver: embedded demo fleet (simulated Karmada control plane at ${demo.karmadaUrl},`,
    );
    console.log(`  members ${[...demo.members.keys()].join(', ')} behind its cluster proxy)`);
  }
  const first = demo
    ? [...demo.members.keys()][0]
    : config.members.mode === 'static'
      ? config.members.clusters[0]?.name
      : undefined;
  console.log(banner(url, first ?? '<member>'));
}

main().catch((e) => {
  if (e instanceof ConfigError) {
    console.error(`fleet-apiserver: invalid configuration:\n${e.message}`);
    process.exit(2);
  }
  console.error('fleet-apiserver: failed to start:', e);
  process.exit((e as { exitCode?: number }).exitCode ?? 1);
});
