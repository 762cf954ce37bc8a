/**
 * The Node server: the same app the worker runs, on node:http(s), with graceful shutdown.
 * TLS and (later) upgrade relays for exec/attach/port-forward live here, never in src/.
 */
import type { ServerOptions as HttpsOptions } from 'node:https';
import { createApp } from '../../src/app.ts';
import type { FleetConfig } from '../../src/config/schema.ts';
import { buildFleet } from '../../src/fleet.ts';
import { nodePlatform, type ServedHandle, serveFetch } from '../../src/platform/node.ts';

export interface NodeFleetOptions {
  config: FleetConfig;
  port?: number;
  host?: string;
  tls?: HttpsOptions;
}

export interface NodeFleet extends ServedHandle {
  /** stop serving and close every upstream pool */
  stop(graceMs?: number): Promise<void>;
}

export async function startNodeFleet(opts: NodeFleetOptions): Promise<NodeFleet> {
  const platform = nodePlatform();
  const app = createApp(buildFleet(opts.config, platform));
  const served = await serveFetch(app.fetch, { port: opts.port ?? 0, host: opts.host, tls: opts.tls });
  return {
    ...served,
    async stop(graceMs = 5_000) {
      await served.close(graceMs);
      await platform.transport.close?.();
    },
  };
}
