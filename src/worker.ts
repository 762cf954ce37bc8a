/**
 * Worker entry (Cloudflare Workers / workerd). Tiny on purpose: configuration from the `FLEET_CONFIG`
 * binding (JSON text: the worker reads no YAML, see wrangler.toml's `[alias]`), the fleet built once per
 * isolate (bindings are known only with the first request), every request handed to the same Hono app
 * the Node server runs. A worker of its own that mounts the fleet does what this one does with
 * `outer.route('/k8s', createApp(deps))` instead.
 */
import { WorkerEntrypoint } from 'cloudflare:workers';
import { Hono } from 'hono';
import { createApp, type FleetApp } from './app.ts';
import { ConfigError, parseConfig } from './config/schema.ts';
import { buildFleet } from './fleet.ts';
import { serviceUnavailable, statusResponse } from './kube/status.ts';
import { useWasmScanner } from './merge/jsonsplit/wasm/lane.ts';
import scannerWasm from './merge/jsonsplit/wasm/skip.wasm';
import { UPGRADE_RELAY } from './platform/types.ts';
import { workerPlatform, workerUpgradeRelay } from './platform/worker.ts';
import { parseRequestInfo } from './request/info.ts';
import type { FleetDeps } from './types.ts';
import { fanOut } from './upstreams/fanout.ts';
import { handleRelay } from './upstreams/relay/serve.ts';
import { parseYaml } from './util/yaml.ts';
import { watchStream } from './watch/route.ts';

// the item scanner's fast lane in WebAssembly SIMD, bundled as a compiled module (Workers refuse compiling
// bytes at run time); should the isolate refuse to instantiate it, the JavaScript lane answers the same
useWasmScanner(scannerWasm);

type Bindings = Record<string, unknown>;
type Built = { app: FleetApp; deps: FleetDeps; env: Bindings } | { error: string };
let built: Built | undefined;

function build(env: Bindings): Built {
  try {
    const text = env.FLEET_CONFIG;
    if (typeof text !== 'string' || text.trim() === '')
      throw new ConfigError('FLEET_CONFIG: binding is missing or empty');
    let raw: unknown;
    try {
      raw = parseYaml(text);
    } catch (e) {
      throw new ConfigError(`FLEET_CONFIG: not valid JSON: ${(e as Error).message}`);
    }
    const config = parseConfig(raw, 'FLEET_CONFIG');
    const deps = buildFleet(config, workerPlatform(env));
    // what the app sees as its env: the bindings, and the runtime's upgrade relay (platform seam)
    return { app: createApp(deps), deps, env: { ...env, [UPGRADE_RELAY]: workerUpgradeRelay() } };
  } catch (e) {
    // a worker cannot refuse to start: it answers every request with the configuration error instead
    const message = e instanceof ConfigError ? e.message : `fleet failed to start: ${(e as Error).message}`;
    console.error(message);
    return { error: message };
  }
}

const app = new Hono<{ Bindings: Bindings }>();
app.all('*', (c) => {
  built ??= build(c.env);
  if ('error' in built) return statusResponse(serviceUnavailable(`invalid configuration: ${built.error}`));
  return built.app.fetch(withoutExpect(c.req.raw), built.env, c.executionCtx);
});

export default app;

/**
 * `Expect` is the receiving server's business and never goes upstream (a cluster's 100 could not reach
 * the client; undici-based upstreams refuse the header). workerd sends no interim 100 itself: a client
 * waits its own timeout (curl: 1 s), then sends the body, which the fleet reads within its limits.
 */
function withoutExpect(request: Request): Request {
  if (!request.headers.has('expect')) return request;
  const headers = new Headers(request.headers);
  headers.delete('expect');
  return new Request(request, { headers });
}

/**
 * The relay entrypoint: reachable only through the FLEET_RELAY service binding (named entrypoints are
 * not routed from the internet). A fan-out wider than the connection budget asks groups of clusters
 * through it (src/upstreams/relay.ts).
 */
export class FleetRelay extends WorkerEntrypoint<Bindings> {
  override fetch(request: Request): Promise<Response> | Response {
    built ??= build(this.env);
    if ('error' in built) return statusResponse(serviceUnavailable(`invalid configuration: ${built.error}`));
    return handleRelay(built.deps, request, fanOut, (req, deps, targets, plainNameCluster) =>
      watchStream(
        req,
        deps,
        parseRequestInfo('GET', new URL(req.url).pathname, new URL(req.url).searchParams),
        targets,
        plainNameCluster,
      ),
    );
  }
}
