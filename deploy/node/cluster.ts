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
 * - Each worker is forked with the memory settings of ./memory.ts (FLEET_MEMORY_TUNING=off: none).
 * - GET /metrics answers for the whole server: the worker that takes the scrape asks the primary, which
 *   asks every listening worker for a snapshot of its registry (METRICS_TIMEOUT_MS each), sums them
 *   with what gone workers counted (src/metrics/cluster.ts) and answers the text.
 */
import cluster, { type Worker } from 'node:cluster';
import { ConfigError, type FleetConfigInput } from '../../src/config/schema.ts';
import { ClusterMetrics } from '../../src/metrics/cluster.ts';
import { isRegistrySnapshot, type RegistrySnapshot } from '../../src/metrics/snapshot.ts';
import { memorySettings } from './memory.ts';

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
  | { type: 'drain'; graceMs: number }
  /** send your registry's snapshot, for scrape `round` */
  | { type: 'metrics-snapshot'; round: number }
  /** the answer to your 'metrics-gather' `id` */
  | { type: 'metrics'; id: number; text: string };
/** worker → primary */
export type ToPrimary =
  /** listening for 'start' (a message sent before a worker's code listens is lost: 'online' is too early) */
  | { type: 'ready' }
  | { type: 'listening'; url: string }
  | { type: 'failed'; message: string; config: boolean }
  /** a scrape arrived: gather every worker's metrics and answer with 'metrics' */
  | { type: 'metrics-gather'; id: number }
  | { type: 'metrics-snapshot'; round: number; snapshot: RegistrySnapshot };

/** How long the primary waits for one worker's snapshot before answering a scrape without it. */
export const METRICS_TIMEOUT_MS = 2_000;

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
  /** the worker serves (it has counted something only from then on) */
  listening?: boolean;
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
  const metrics = primaryMetrics(slots);
  // each worker starts with the memory settings (./memory.ts): they must be there before it starts
  const memory = memorySettings();
  cluster.setupPrimary({ execArgv: [...memory.execArgv, ...process.execArgv] });

  const fork = (slot: Slot) => {
    slot.timer = undefined;
    if (stopping) return;
    const w = cluster.fork({ ...memory.env, FLEET_WORKER_INDEX: String(slot.index) });
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
      } else if (m.type === 'metrics-gather') {
        void metrics.gather().then((text) => {
          if (w.isConnected()) w.send({ type: 'metrics', id: m.id, text } satisfies ToWorker);
        });
      } else if (m.type === 'metrics-snapshot') {
        metrics.answered(w, m.round, m.snapshot);
      } else if (m.type === 'listening') {
        slot.listening = true;
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
      metrics.gone(w);
      if (slot.worker === w) {
        slot.worker = undefined;
        slot.listening = false;
      }
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

/** The primary's side of GET /metrics: scrape rounds over the listening workers. */
function primaryMetrics(slots: Slot[]) {
  const sum = new ClusterMetrics();
  const key = (w: Worker) => `worker ${slotOf(w)?.index ?? '?'} (pid ${w.process.pid})`;
  const slotOf = (w: Worker) => slots.find((s) => s.worker === w);
  const keys = new Map<Worker, string>();
  interface Round {
    waiting: Set<Worker>;
    answered: string[];
    settle: () => void;
  }
  const rounds = new Map<number, Round>();
  let next = 0;
  return {
    gather(): Promise<string> {
      const round = ++next;
      const asked = slots.flatMap((s) =>
        s.worker && s.listening && s.worker.isConnected() ? [s.worker] : [],
      );
      for (const w of asked) if (!keys.has(w)) keys.set(w, key(w));
      return new Promise<string>((resolve) => {
        const r: Round = { waiting: new Set(asked), answered: [], settle: () => {} };
        const timer = setTimeout(() => r.settle(), METRICS_TIMEOUT_MS);
        r.settle = () => {
          clearTimeout(timer);
          rounds.delete(round);
          const missing = [...r.waiting].map((w) => ({
            worker: keys.get(w)!,
            why: `did not answer within ${METRICS_TIMEOUT_MS / 1000} s`,
          }));
          resolve(sum.expose(r.answered, missing));
        };
        rounds.set(round, r);
        for (const w of asked) w.send({ type: 'metrics-snapshot', round } satisfies ToWorker);
        if (asked.length === 0) r.settle();
      });
    },
    answered(w: Worker, round: number, snap: unknown) {
      const k = keys.get(w) ?? key(w);
      keys.set(w, k);
      // a snapshot that is not one (another build?) is left out, as if the worker had not answered
      if (!isRegistrySnapshot(snap)) return;
      sum.record(k, snap);
      const r = rounds.get(round);
      if (!r?.waiting.delete(w)) return;
      r.answered.push(k);
      if (r.waiting.size === 0) r.settle();
    },
    /** a worker exited: its counts stay in the sum, and no round waits for it */
    gone(w: Worker) {
      const k = keys.get(w);
      if (k) sum.retire(k);
      keys.delete(w);
      for (const r of rounds.values()) if (r.waiting.delete(w) && r.waiting.size === 0) r.settle();
    },
  };
}
