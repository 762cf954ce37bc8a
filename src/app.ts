/**
 * The fleet's request pipeline, built in one readable place like kube-apiserver's DefaultBuildHandlerChain:
 *
 *   recovery (onError) → request info → [authentication → audit → impersonation → authorization] → route
 *
 * The bracketed filters arrive with the identity work; each is one small middleware in src/middleware/.
 * This module uses only Web-standard APIs: the same app answers on Node (deploy/node) and in workerd
 * (src/worker.ts).
 */
import { Hono } from 'hono';
import type { FleetConfig } from './config/schema.ts';
import { failure, statusResponse } from './merge/status.ts';
import { recovery } from './middleware/recovery/index.ts';
import { type InfoVariables, requestInfo } from './middleware/requestinfo/index.ts';
import { fleetRoute } from './routes/fleet.ts';
import { live, ready } from './routes/health.ts';
import { passthrough } from './routes/passthrough.ts';
import type { UpstreamClient } from './upstreams/client.ts';
import type { Membership } from './upstreams/membership.ts';
import type { RelayFetcher } from './upstreams/relay.ts';

export interface FleetDeps {
  config: FleetConfig;
  membership: Membership;
  client: UpstreamClient;
  /** gzip large merged answers here (Node) or leave it to the runtime (Workers) */
  gzipResponses: boolean;
  /** simultaneous upstream connections one request may hold (Workers: 6); wider fan-outs use `relay` */
  maxConnectionsPerRequest: number;
  /** the fleet's own relay entrypoint (Workers service binding), for fan-outs wider than the budget */
  relay?: RelayFetcher;
}

export type FleetEnv = { Variables: InfoVariables };

export function createApp(deps: FleetDeps): Hono<FleetEnv> {
  const app = new Hono<FleetEnv>();
  app.onError(recovery);
  app.notFound(() =>
    statusResponse(failure(404, 'NotFound', 'the server could not find the requested resource')),
  );

  app.get('/healthz', live);
  app.get('/livez', live);
  app.get('/readyz', (c) => ready(c, deps));

  app.use(requestInfo);
  app.all('*', async (c) => {
    const info = c.get('info');
    // /clusterspaces/<one cluster>/… is a transparent proxy; everything else is the fleet view
    if (info.clusterspaceForm === 'prefix' && info.clusterspace !== 'all') return passthrough(c, deps, info);
    return fleetRoute(c, deps, info);
  });
  return app;
}
