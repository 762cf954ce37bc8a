/**
 * The Node server: the same app the worker runs, on node:http(s), with graceful shutdown.
 * TLS and (later) upgrade relays for exec/attach/port-forward live here, never in src/.
 */
import type { IncomingMessage } from 'node:http';
import type { ServerOptions as HttpsOptions } from 'node:https';
import { createApp } from '../../src/app.ts';
import { TRANSPORT_FACTS } from '../../src/auth/request.ts';
import type { FleetConfig } from '../../src/config/schema.ts';
import { buildFleet } from '../../src/fleet.ts';
import { bindRuntimeCounters } from '../../src/metrics/process.ts';
import { installNodeHooks, nodePlatform, UndiciTransport } from '../../src/platform/node.ts';
import { spareCounter } from '../../src/platform/node-watch-spare.ts';
import { DIRECT_RELAY, EXEC_TRANSPORT } from '../../src/platform/types.ts';
import { RAW_TARGET } from '../../src/request/target.ts';
import { nodeExecTransport } from './exec-transport.ts';
import { awaitingContinue, type ServedHandle, serveFetch } from './http.ts';
import { NodeDirectRelay } from './relay.ts';
import { httpsOptions, transportFactsFor } from './tls.ts';
import { attachUpgradeRelay } from './upgrade.ts';

/**
 * Reads away a request body nobody will use, before the answer is sent: a client still sending would
 * otherwise see a reset connection instead of the answer, and the Node adapter would close the socket
 * later, under whatever request it carries by then. Bounded: past `maxBytes` the connection is closed.
 */
function discardBody(incoming: IncomingMessage, maxBytes: number): Promise<void> {
  if (incoming.readableEnded || incoming.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let n = 0;
    const done = () => resolve();
    incoming.on('data', (chunk: Buffer) => {
      n += chunk.length;
      if (n > maxBytes) {
        incoming.socket.destroy();
        done();
      }
    });
    incoming.once('end', done);
    incoming.once('close', done);
    incoming.on('error', done);
    incoming.resume();
  });
}

export interface NodeFleetOptions {
  config: FleetConfig;
  port?: number;
  host?: string;
  tls?: HttpsOptions;
  /**
   * sent as `X-Fleet-Worker` on every response, so a test can tell which worker process answered;
   * main.ts sets it only when FLEET_TEST_WORKER_HEADER=1 (nothing about the process leaks otherwise)
   */
  workerHeader?: string;
}

export interface NodeFleet extends ServedHandle {
  /** stop serving and close every upstream pool */
  stop(graceMs?: number): Promise<void>;
}

export async function startNodeFleet(opts: NodeFleetOptions): Promise<NodeFleet> {
  // Node's process-wide hooks (src/platform/node.ts): made here, once, never by an import
  installNodeHooks();
  // the Node side's own counts, exposed at /metrics beside the fleet's
  bindRuntimeCounters([spareCounter]);
  const platform = nodePlatform(opts.config);
  const deps = buildFleet(opts.config, platform);
  const app = createApp(deps);
  // TLS (serving certificate, client certificates) and what the app learns from the connection: tls.ts
  const tls = httpsOptions(deps.config, opts.tls);
  const facts = transportFactsFor(deps.config);
  // kubectl fleet exec opens upstream WebSockets, which Node's fetch cannot
  const execTransport = nodeExecTransport();
  // passthrough answers written from the upstream's socket to the client's (./relay.ts), over the same pools
  const pools = platform.transport instanceof UndiciTransport ? platform.transport : undefined;
  const served = await serveFetch(
    (req, env) => {
      if (opts.workerHeader) env.outgoing.setHeader('X-Fleet-Worker', opts.workerHeader);
      const answer = app.fetch(req, {
        [TRANSPORT_FACTS]: facts(env.incoming),
        // the target as sent: @hono/node-server's URL has dot segments resolved already
        [RAW_TARGET]: env.incoming.url ?? '/',
        [EXEC_TRANSPORT]: execTransport,
        [DIRECT_RELAY]: pools && new NodeDirectRelay(pools, env.outgoing),
      });
      // a body refused for its size (by Content-Length) is still arriving: read it away first (a `then`,
      // not an async function: this runs for every request); unless the client waits for `100 Continue`
      // before sending it (./http.ts): then the 413 goes at once, as kube-apiserver's does
      const read = (res: Response): Response | Promise<Response> =>
        res.status === 413 && !awaitingContinue(env.incoming)
          ? discardBody(env.incoming, 4 * deps.config.limits.maxBodyBytes).then(() => res)
          : res;
      return answer instanceof Promise ? answer.then(read) : read(answer);
    },
    {
      port: opts.port ?? 0,
      host: opts.host,
      tls,
      // room above the fleet's own header limit, so that it answers 431 with a Status
      maxHeaderSize: deps.config.limits.maxHeaderBytes * 2,
    },
  );
  // exec / attach / port-forward: HTTP/1.1 upgrades go through the same app and are spliced by ./upgrade.ts
  attachUpgradeRelay(served.server, (req, env) =>
    app.fetch(req, { ...env, [TRANSPORT_FACTS]: facts(env.incoming as IncomingMessage) }),
  );
  return {
    ...served,
    async stop(graceMs = 5_000) {
      await served.close(graceMs);
      await platform.transport.close?.();
    },
  };
}
