/**
 * One process per core: a primary that forks N workers (node:cluster) which share the listening socket.
 * The fleet is stateless, so any worker may answer any request; the primary only supervises.
 *
 * - The primary validates the configuration once (an invalid one stops startup before any fork) and
 *   hands the parsed document to each worker over IPC, so every worker serves the same fleet, and the
 *   embedded demo's simulated clusters (which live in the primary) are never duplicated.
 * - SIGTERM/SIGINT: every worker is told to drain (stop accepting, let in-flight requests finish, end
 *   watches after the drain window); the primary exits when all have, or kills the late ones.
 * - A worker that dies unexpectedly is forked again after a backoff that doubles with each quick death
 *   (0.5 s … 30 s) and resets once a worker has served for a minute, so a crash loop cannot spin a core.
 */
import cluster, { type Worker } from 'node:cluster';
import { ConfigError, type FleetConfigInput } from '../../src/config/schema.ts';

/** primary → worker */
export type ToWorker =
  | {
      type: 'start';
      raw: FleetConfigInput;
      source: string;
      port: number;
      host: string;
      index: number;
      /** the drain window a worker uses when signalled directly (not through the primary) */
      graceMs: number;
    }
  | { type: 'drain'; graceMs: number };
/** worker → primary */
export type ToPrimary =
  /** listening for 'start' (a message sent before a worker's code listens is lost: 'online' is too early) */
  | { type: 'ready' }
  | { type: 'listening'; url: string }
  | { type: 'failed'; message: string; config: boolean };

export const BACKOFF_FIRST_MS = 500;
export const BACKOFF_MAX_MS = 30_000;
/** a worker that served this long before dying starts the backoff over */
export const STABLE_MS = 60_000;

/** The delay before restarting a worker slot that has died `quickDeaths` times in a row (1 = first). */
export function restartDelay(quickDeaths: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, quickDeaths - 1));
}

export interface PrimaryOptions {
  workers: number;
  raw: FleetConfigInput;
  source: string;
  port: number;
  host: string;
  graceMs: number;
  log?: (line: string) => void;
}

export interface Primary {
  url: string;
  pids(): number[];
  /** drain every worker (bounded by graceMs, plus a few seconds before late ones are killed) */
  stop(graceMs: number): Promise<void>;
}

interface Slot {
  index: number;
  worker?: Worker;
  startedAt: number;
  quickDeaths: number;
  timer?: NodeJS.Timeout;
}

/**
 * Forks the workers and resolves once every one listens (on the same port: with port 0 the first
 * listen picks it and cluster hands the same socket to the rest). Rejects when a worker fails to start:
 * a configuration every worker would fail on must stop startup, not loop.
 */
export function startPrimary(opts: PrimaryOptions): Promise<Primary> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const slots: Slot[] = Array.from({ length: opts.workers }, (_, i) => ({
    index: i + 1,
    startedAt: 0,
    quickDeaths: 0,
  }));
  let stopping = false;
  let url = '';
  let startup: { resolve: () => void; reject: (e: Error) => void; pending: number } | undefined;
  const exits = new Set<Promise<void>>();

  const fork = (slot: Slot) => {
    slot.timer = undefined;
    if (stopping) return;
    const w = cluster.fork({ FLEET_WORKER_INDEX: String(slot.index) });
    slot.worker = w;
    slot.startedAt = Date.now();
    let done!: () => void;
    const exited = new Promise<void>((r) => {
      done = r;
    });
    exits.add(exited);
    w.on('message', (m: ToPrimary) => {
      if (m.type === 'ready') {
        const { raw, source, port, host, graceMs } = opts;
        w.send({ type: 'start', raw, source, port, host, graceMs, index: slot.index } satisfies ToWorker);
      } else if (m.type === 'listening') {
        url ||= m.url;
        if (startup && --startup.pending === 0) startup.resolve();
      } else if (m.type === 'failed' && startup) {
        startup.reject(
          m.config ? new ConfigError(m.message) : new Error(`worker ${slot.index}: ${m.message}`),
        );
        startup = undefined;
      }
    });
    w.on('exit', (code, signal) => {
      exits.delete(exited);
      done();
      if (slot.worker === w) slot.worker = undefined;
      if (stopping) return;
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (startup) {
        startup.reject(
          new Error(`worker ${slot.index} (pid ${w.process.pid}) exited with ${how} while starting`),
        );
        startup = undefined;
        return;
      }
      slot.quickDeaths = Date.now() - slot.startedAt >= STABLE_MS ? 1 : slot.quickDeaths + 1;
      const delay = restartDelay(slot.quickDeaths);
      log(
        `fleet-apiserver: worker ${slot.index} (pid ${w.process.pid}) exited with ${how}; restarting it in ${(delay / 1000).toFixed(1)} s`,
      );
      slot.timer = setTimeout(() => fork(slot), delay);
    });
  };

  const stop = async (graceMs: number) => {
    if (stopping) return;
    stopping = true;
    for (const s of slots) {
      if (s.timer) clearTimeout(s.timer);
      const w = s.worker;
      if (w?.isConnected()) w.send({ type: 'drain', graceMs } satisfies ToWorker);
    }
    // a worker stuck past its own drain window (it destroys its sockets at graceMs) is killed
    const kill = setTimeout(() => {
      for (const s of slots) s.worker?.process.kill('SIGKILL');
    }, graceMs + 5_000);
    await Promise.all([...exits]);
    clearTimeout(kill);
  };

  return new Promise<Primary>((resolve, reject) => {
    startup = {
      pending: slots.length,
      resolve: () => {
        startup = undefined;
        resolve({
          url,
          pids: () => slots.flatMap((s) => (s.worker?.process.pid ? [s.worker.process.pid] : [])),
          stop,
        });
      },
      reject: (e) => {
        void stop(0).then(() => reject(e));
      },
    };
    for (const s of slots) fork(s);
  });
}
