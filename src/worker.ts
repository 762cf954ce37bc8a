/**
 * Worker entry (Cloudflare Workers / workerd). Tiny on purpose: configuration from the `FLEET_CONFIG`
 * binding (JSON or YAML text), the fleet built once per isolate, every request handed to the same app
 * the Node server runs.
 */
import { parse as parseYaml } from 'yaml';
import { createApp } from './app.ts';
import { ConfigError, parseConfig } from './config/schema.ts';
import { buildFleet } from './fleet.ts';
import { serviceUnavailable, statusResponse } from './merge/status.ts';
import { workerPlatform } from './platform/worker.ts';

type App = ReturnType<typeof createApp>;
let built: { app: App } | { error: string } | undefined;

function build(env: Record<string, unknown>): { app: App } | { error: string } {
  try {
    const text = env.FLEET_CONFIG;
    if (typeof text !== 'string' || text.trim() === '')
      throw new ConfigError('FLEET_CONFIG: binding is missing or empty');
    let raw: unknown;
    try {
      raw = parseYaml(text);
    } catch (e) {
      throw new ConfigError(`FLEET_CONFIG: not valid YAML/JSON: ${(e as Error).message}`);
    }
    const config = parseConfig(raw, 'FLEET_CONFIG');
    return { app: createApp(buildFleet(config, workerPlatform(env))) };
  } catch (e) {
    // a worker cannot refuse to start: it answers every request with the configuration error instead
    const message = e instanceof ConfigError ? e.message : `fleet failed to start: ${(e as Error).message}`;
    console.error(message);
    return { error: message };
  }
}

export default {
  fetch(request: Request, env: Record<string, unknown>, ctx: unknown): Response | Promise<Response> {
    built ??= build(env);
    if ('error' in built) return statusResponse(serviceUnavailable(`invalid configuration: ${built.error}`));
    return built.app.fetch(request, env, ctx as never);
  },
};
