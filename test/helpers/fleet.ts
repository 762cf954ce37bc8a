/**
 * Starts the fleet-apiserver for a test on either runtime, over real HTTP on an OS-picked port:
 * - node: deploy/node's server in this process;
 * - workerd: the bundled worker (built by global-setup) in workerd through miniflare.
 * Both get the same configuration, so a scenario can run against each and must answer the same.
 */
import { resolve } from 'node:path';
import { Miniflare } from 'miniflare';
import { startNodeFleet } from '../../deploy/node/server.ts';
import { WORKER_COMPATIBILITY } from '../../scripts/build-worker.mjs';
import { type FleetConfigInput, parseConfig } from '../../src/config/schema.ts';

export type Runtime = 'node' | 'workerd';
export const RUNTIMES: Runtime[] = ['node', 'workerd'];

export interface RunningFleet {
  runtime: Runtime;
  url: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** workerd only: every outgoing fetch of the worker goes through this (e.g. a connection-budget harness) */
  outbound?: (req: Request) => Promise<Response>;
  /** serve HTTPS with this certificate (kubectl sends bearer tokens only over TLS) */
  tls?: { cert: string; key: string };
  /** workerd only: more service bindings (e.g. an mTLS binding: a network service with a client certificate) */
  bindings?: Record<string, unknown>;
}

export async function startFleet(
  runtime: Runtime,
  config: FleetConfigInput,
  opts: StartOptions = {},
): Promise<RunningFleet> {
  if (runtime === 'node') {
    const f = await startNodeFleet({ config: parseConfig(config), ...(opts.tls ? { tls: opts.tls } : {}) });
    return { runtime, url: f.url, stop: () => f.stop(500) };
  }
  return startWorkerFleet(JSON.stringify(config), opts);
}

/**
 * The bundled worker in workerd with `configText` (YAML or JSON) as its FLEET_CONFIG binding, bound as
 * wrangler.toml binds it.
 */
export async function startWorkerFleet(configText: string, opts: StartOptions = {}): Promise<RunningFleet> {
  const mf = new Miniflare({
    name: 'fleet',
    modules: true,
    scriptPath: resolve('.cache/worker/worker.js'),
    // as wrangler.toml sets them (request.signal aborting, node:crypto)
    ...WORKER_COMPATIBILITY,
    bindings: { FLEET_CONFIG: configText },
    // the fleet's own relay entrypoint, as wrangler.toml binds it
    serviceBindings: {
      FLEET_RELAY: { name: 'fleet', entrypoint: 'FleetRelay' },
      ...(opts.bindings as Record<string, never>),
    },
    ...(opts.outbound ? { outboundService: opts.outbound as never } : {}),
    host: '127.0.0.1',
    port: 0,
    ...(opts.tls ? { https: true, httpsCert: opts.tls.cert, httpsKey: opts.tls.key } : {}),
  });
  const url = await mf.ready;
  return { runtime: 'workerd', url: url.origin, stop: () => mf.dispose() };
}
