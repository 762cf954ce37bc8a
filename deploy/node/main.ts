/**
 * `npm start`: the fleet-apiserver on Node.
 *
 *   npm start                          embedded default: simulated control plane + 3 members
 *   npm start -- --config fleet.yaml   a real fleet (YAML or JSON; see README "Configuration")
 *
 * Environment: PORT (default 8080), HOST (default 127.0.0.1), FLEET_CONFIG (path, instead of --config).
 * An invalid configuration stops startup with the offending field named and exit code 2.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describeAuthentication } from '../../src/auth/authenticator.ts';
import { ConfigError, type FleetConfig, parseConfig } from '../../src/config/schema.ts';
import { startSimFleet } from './demo.ts';
import { startNodeFleet } from './server.ts';

function configPath(argv: string[]): string | undefined {
  const i = argv.indexOf('--config');
  if (i >= 0) return argv[i + 1];
  const eq = argv.find((a) => a.startsWith('--config='));
  return eq ? eq.slice('--config='.length) : process.env.FLEET_CONFIG;
}

export function loadConfigFile(path: string): FleetConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `${path}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new ConfigError(`${path}: not valid YAML/JSON: ${(e as Error).message}`);
  }
  return parseConfig(raw, path);
}

async function main() {
  const port = Number(process.env.PORT ?? 8080);
  const host = process.env.HOST ?? '127.0.0.1';
  const path = configPath(process.argv.slice(2));
  let config: FleetConfig;
  let demo: Awaited<ReturnType<typeof startSimFleet>> | undefined;
  if (path) {
    config = loadConfigFile(path);
  } else {
    demo = await startSimFleet();
    config = parseConfig(demo.karmadaConfig(), 'embedded default');
  }
  const fleet = await startNodeFleet({ config, port, host });
  const url = fleet.url;
  const authn = describeAuthentication(config.authentication);
  console.log(
    `fleet-apiserver: authentication: ${authn.join(', ')}; upstream identity: ${config.upstreamIdentity.mode}`,
  );
  if (demo)
    console.log(
      '  (embedded demo: anonymous access is on, every caller acts as system:anonymous in the simulated clusters)',
    );
  if (demo) {
    console.log(
      `fleet-apiserver: embedded demo fleet (simulated Karmada control plane at ${demo.karmadaUrl},`,
    );
    console.log(`  members ${[...demo.members.keys()].join(', ')} behind its cluster proxy)`);
  }
  console.log(`fleet-apiserver listening on ${url}
Point kubectl at one cluster of the fleet:
  kubectl --server ${url}/clusterspaces/member1 get pods -A
  kubectl --server ${url}/clusterspaces/karmada get clusters
Or add contexts to a kubeconfig:
  kubectl config set-cluster fleet-member1 --server=${url}/clusterspaces/member1
  kubectl config set-context member1 --cluster=fleet-member1 && kubectl --context member1 get pods -A`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`fleet-apiserver: ${signal}, draining`);
    await fleet.stop(10_000);
    await demo?.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((e) => {
  if (e instanceof ConfigError) {
    console.error(`fleet-apiserver: invalid configuration:\n${e.message}`);
    process.exit(2);
  }
  console.error('fleet-apiserver: failed to start:', e);
  process.exit(1);
});
