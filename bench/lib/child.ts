/**
 * A helper process of the benchmark (started by ./host.ts): answers the commands of ./protocol.ts.
 * Role code is imported lazily, so a load-generator process never loads the fleet or the simulator.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import type { NodeFleet } from '../../deploy/node/server.ts';
import type { FleetVariant } from '../cases/types.ts';
import type { CallMessage, Commands, ReplyMessage } from './protocol.ts';

let sims: ServedSimFleet | undefined;
const fleets = new Map<FleetVariant, NodeFleet>();
let inspector: Session | undefined;

function inspect<T>(method: string, params?: object): Promise<T> {
  if (!inspector) {
    inspector = new Session();
    inspector.connect();
  }
  const session = inspector;
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res as T))),
  );
}

type Handlers = { [K in keyof Commands]: (arg: Commands[K]['arg']) => Promise<Commands[K]['result']> };

async function caseNamed(name: string) {
  const { findCase } = await import('../cases/index.ts');
  const c = findCase(name);
  if (!c) throw new Error(`unknown case ${name}`);
  return c;
}

function upstream(): ServedSimFleet {
  if (!sims) throw new Error('upstream not started');
  return sims;
}

const handlers: Handlers = {
  async 'upstream.start'({ members }) {
    const { startSimFleet } = await import('../../deploy/node/demo.ts');
    sims = await startSimFleet({ members, seed: false });
    // anonymous plus the benchmark's OIDC issuer (JWKS served from here): bench/cases/authn.ts
    const { benchAuthentication } = await import('../cases/authn.ts');
    const authentication = await benchAuthentication();
    return {
      memberUrls: Object.fromEntries(sims.memberUrls),
      karmadaUrl: sims.karmadaUrl,
      configs: {
        static: sims.staticConfig({ authentication }),
        merged: sims.staticConfig({ authentication, federation: false }),
        karmada: sims.karmadaConfig({ authentication }),
      },
    };
  },
  async 'upstream.setup'({ case: name }) {
    await (await caseNamed(name)).setup?.({ sims: upstream() });
    return null;
  },
  async 'upstream.teardown'({ case: name }) {
    await (await caseNamed(name)).teardown?.({ sims: upstream() });
    return null;
  },
  async 'fleet.start'({ variant, config }) {
    const { startNodeFleet } = await import('../../deploy/node/server.ts');
    const { parseConfig } = await import('../../src/config/schema.ts');
    const fleet = await startNodeFleet({ config: parseConfig(config) });
    fleets.set(variant, fleet);
    return { url: fleet.url };
  },
  async 'load.run'(spec) {
    const { runLoad } = await import('./load.ts');
    return runLoad(spec);
  },
  async 'case.action'({ case: name, role, action, arg }) {
    const c = await caseNamed(name);
    if (role === 'upstream') {
      const fn = c.upstreamActions?.[action];
      if (!fn) throw new Error(`case ${name} has no upstream action ${action}`);
      return await fn({ sims: upstream() }, arg);
    }
    const fn = c.loadActions?.[action];
    if (!fn) throw new Error(`case ${name} has no load action ${action}`);
    return await fn(arg);
  },
  async 'proc.memory'({ gc }) {
    if (gc) {
      // twice: the first pass finalizes, the second frees what the finalizers released
      await inspect('HeapProfiler.collectGarbage');
      await inspect('HeapProfiler.collectGarbage');
    }
    return process.memoryUsage();
  },
  async 'proc.heapSnapshot'({ path }) {
    const { writeHeapSnapshot } = await import('node:v8');
    return { path: writeHeapSnapshot(path) };
  },
  async 'profile.start'() {
    await inspect('Profiler.enable');
    await inspect('Profiler.setSamplingInterval', { interval: 200 });
    await inspect('Profiler.start');
    return null;
  },
  async 'profile.stop'({ path }) {
    const { profile } = await inspect<{ profile: unknown }>('Profiler.stop');
    writeFileSync(path, JSON.stringify(profile));
    return { path };
  },
  async exit() {
    await Promise.all([...fleets.values()].map((f) => f.stop(500)));
    await sims?.close();
    setImmediate(() => process.exit(0));
    return null;
  },
};

process.on('message', (msg: CallMessage) => {
  const handler = handlers[msg.cmd] as (arg: unknown) => Promise<unknown>;
  handler(msg.arg).then(
    (result) => process.send?.({ id: msg.id, ok: true, result } satisfies ReplyMessage),
    (err: unknown) =>
      process.send?.({
        id: msg.id,
        ok: false,
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      } satisfies ReplyMessage),
  );
});
process.on('disconnect', () => process.exit(0));
process.send?.({ id: 0, ok: true, result: 'ready' } satisfies ReplyMessage);
