/**
 * One fleet worker bundle in its own workerd (miniflare), as the workerd benches start it: the fleet's
 * relay entrypoint bound as in wrangler.toml, a port the OS picks, and the workerd process's pid (miniflare
 * does not expose it: found as the workerd that was not there before), for CPU and memory from /proc.
 */
import { Miniflare, type MiniflareOptions } from 'miniflare';
import { WORKER_COMPATIBILITY } from '../../scripts/build-worker.mjs';
import { descendantsNamed } from './proc.ts';

export interface WorkerdFleet {
  mf: Miniflare;
  url: string;
  pid: number;
}

export async function startWorkerdFleet(
  scriptPath: string,
  config: string,
  /** more miniflare options (an outbound service, the inspector, a log) */
  extra: Partial<MiniflareOptions> = {},
): Promise<WorkerdFleet> {
  const before = new Set(descendantsNamed(process.pid, 'workerd'));
  const mf = new Miniflare({
    name: 'fleet',
    modules: true,
    scriptPath,
    ...WORKER_COMPATIBILITY,
    bindings: { FLEET_CONFIG: config },
    serviceBindings: { FLEET_RELAY: { name: 'fleet', entrypoint: 'FleetRelay' } },
    host: '127.0.0.1',
    port: 0,
    ...extra,
  } as MiniflareOptions);
  const url = (await mf.ready).origin;
  const pid = descendantsNamed(process.pid, 'workerd').find((p) => !before.has(p));
  if (pid === undefined) {
    await mf.dispose();
    throw new Error('workerd process not found');
  }
  return { mf, url, pid };
}
