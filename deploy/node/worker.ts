/**
 * A worker process of the Node deployment (see ./cluster.ts): it waits for the configuration from the
 * primary, serves the fleet on the shared port, and drains when told to (or when signalled directly, or
 * when the primary is gone: a worker never outlives its supervisor). Its GET /metrics answers the sum
 * over all workers, asked of the primary (./cluster.ts); it sends its own registry when asked for it.
 */
import { ConfigError, parseConfig } from '../../src/config/schema.ts';
import { bindProcessMetrics, type LocalMetrics } from '../../src/metrics/process.ts';
import { METRICS_TIMEOUT_MS, type ToPrimary, type ToWorker } from './cluster.ts';
import { type NodeFleet, startNodeFleet } from './server.ts';

const DEFAULT_GRACE_MS = 10_000;

export function runWorker(workerHeader?: string): void {
  const send = (m: ToPrimary) => process.send?.(m);
  let fleet: NodeFleet | undefined;
  let name = `worker (pid ${process.pid})`;
  let graceMs = DEFAULT_GRACE_MS;
  let draining = false;
  const drain = async (ms: number, why: string) => {
    if (draining) return;
    draining = true;
    console.log(`fleet-apiserver: ${name}: ${why}, draining`);
    await fleet?.stop(ms);
    process.exit(0);
  };
  const metrics = workerMetrics(send);
  process.on('message', (m: ToWorker) => {
    if (m.type === 'metrics-snapshot' || m.type === 'metrics') return metrics.onMessage(m);
    if (m.type === 'drain') void drain(m.graceMs, 'told to stop');
    if (m.type !== 'start' || fleet) return;
    name = `worker ${m.index} (pid ${process.pid})`;
    graceMs = m.graceMs;
    void (async () => {
      try {
        const config = parseConfig(m.raw, m.source);
        fleet = await startNodeFleet({ config, port: m.port, host: m.host, workerHeader });
        if (draining) return void (await fleet.stop(0));
        console.log(`fleet-apiserver: ${name} serving`);
        send({ type: 'listening', url: fleet.url });
      } catch (e) {
        const code = e instanceof ConfigError ? 2 : 1;
        const failed: ToPrimary = { type: 'failed', message: (e as Error).message, config: code === 2 };
        if (process.send) process.send(failed, () => process.exit(code));
        else process.exit(code);
      }
    })();
  });
  send({ type: 'ready' });
  process.on('SIGTERM', () => void drain(graceMs, 'SIGTERM'));
  process.on('SIGINT', () => void drain(graceMs, 'SIGINT'));
  process.on('disconnect', () => void drain(graceMs, 'the primary is gone'));
}

/**
 * This worker's side of GET /metrics: its fleet's scrape asks the primary for the sum (and waits a little
 * longer than the primary waits for any one worker), and the primary's asks get this registry.
 */
function workerMetrics(send: (m: ToPrimary) => void) {
  let local: LocalMetrics | undefined;
  let next = 0;
  const waiting = new Map<number, (text: string) => void>();
  bindProcessMetrics((m) => {
    local = m;
    return () =>
      new Promise<string>((resolve, reject) => {
        const id = ++next;
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error('the primary process did not answer'));
        }, METRICS_TIMEOUT_MS + 3_000);
        waiting.set(id, (text) => {
          clearTimeout(timer);
          resolve(text);
        });
        send({ type: 'metrics-gather', id });
      });
  });
  return {
    onMessage(m: Extract<ToWorker, { type: 'metrics-snapshot' | 'metrics' }>) {
      if (m.type === 'metrics') {
        const done = waiting.get(m.id);
        waiting.delete(m.id);
        done?.(m.text);
        return;
      }
      // before the fleet is built nothing has been counted
      send({ type: 'metrics-snapshot', round: m.round, snapshot: local?.snapshot() ?? [] });
    },
  };
}
