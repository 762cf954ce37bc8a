/**
 * Canned upstreams (./canned-child.ts): clusters answering pre-serialised bytes from processes of their
 * own, the floor for merged lists. `processes` children (default 2, BENCH_CANNED_PROCS) share the
 * clusters round-robin, so the parallel baseline is not one event loop writing every answer in turn.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface CannedSpec {
  clusters: number;
  pods: number;
  latencyMs: number;
  /** events a watch writes at once (default 0: a watch stays silent) */
  watchEvents?: number;
}

export interface CannedReply {
  urls: string[];
  /** one cluster's answers (every cluster answers the same bytes) */
  bytes: { json: number; table: number; watch: number };
}

export interface CannedCounters {
  answered: number;
  openWatches: number;
  unknownPaths: Record<string, number>;
}

export interface CannedRequest {
  id: number;
  cmd: 'serve' | 'counters' | 'close';
  arg?: unknown;
}

const CHILD = fileURLToPath(new URL('./canned-child.ts', import.meta.url));

interface Proc {
  child: ChildProcess;
  call<T>(cmd: CannedRequest['cmd'], arg?: unknown): Promise<T>;
}

async function startOne(): Promise<Proc> {
  const child = fork(CHILD, [], {
    execArgv: ['--import', 'tsx', '--max-old-space-size=4096'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let next = 1;
  child.once('exit', (code) => {
    for (const p of pending.values()) p.reject(new Error(`canned upstream exited (${code})`));
    pending.clear();
  });
  await new Promise<void>((resolve, reject) => {
    const onExit = () => reject(new Error('canned upstream failed to start'));
    child.once('exit', onExit);
    child.on('message', (m: { id: number; ok: boolean; result: unknown }) => {
      if (m.id === 0) {
        child.off('exit', onExit);
        resolve();
        return;
      }
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.ok) p?.resolve(m.result);
      else p?.reject(new Error(`canned upstream: ${m.result}`));
    });
  });
  return {
    child,
    call: <T>(cmd: CannedRequest['cmd'], arg?: unknown) =>
      new Promise<T>((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, cmd, arg } satisfies CannedRequest);
      }),
  };
}

export interface Canned {
  pids: number[];
  /** (re)serves `spec.clusters` clusters; URLs in cluster order */
  serve(spec: CannedSpec): Promise<CannedReply>;
  counters(): Promise<CannedCounters>;
  stop(): Promise<void>;
}

export async function startCanned(processes = Number(process.env.BENCH_CANNED_PROCS) || 2): Promise<Canned> {
  const procs = await Promise.all(Array.from({ length: Math.max(1, processes) }, startOne));
  return {
    pids: procs.map((p) => p.child.pid!),
    async serve(spec) {
      const share = procs.map(
        (_, k) => Math.floor(spec.clusters / procs.length) + (k < spec.clusters % procs.length ? 1 : 0),
      );
      const replies = await Promise.all(
        procs.map((p, k) => p.call<CannedReply>('serve', { ...spec, clusters: share[k] })),
      );
      // round-robin: cluster i is served by process i mod P
      const urls: string[] = [];
      for (let i = 0; i < spec.clusters; i++)
        urls.push(replies[i % procs.length]!.urls[Math.floor(i / procs.length)]!);
      return { urls, bytes: replies[0]!.bytes };
    },
    async counters() {
      const all = await Promise.all(procs.map((p) => p.call<CannedCounters>('counters')));
      const unknownPaths: Record<string, number> = {};
      for (const c of all)
        for (const [k, v] of Object.entries(c.unknownPaths)) unknownPaths[k] = (unknownPaths[k] ?? 0) + v;
      return {
        answered: all.reduce((n, c) => n + c.answered, 0),
        openWatches: all.reduce((n, c) => n + c.openWatches, 0),
        unknownPaths,
      };
    },
    async stop() {
      await Promise.all(
        procs.map(
          (p) =>
            new Promise<void>((done) => {
              if (p.child.exitCode !== null) return done();
              const t = setTimeout(() => p.child.kill('SIGKILL'), 5_000);
              p.child.once('exit', () => {
                clearTimeout(t);
                done();
              });
              p.call('close').catch(() => {});
            }),
        ),
      );
    },
  };
}

let shared: Promise<Canned> | undefined;

/**
 * One set of canned processes for the whole harness run (their base data takes a few seconds to build):
 * every case that asks gets the same; they go when the harness exits (and on their own when it dies: the
 * IPC channel closes).
 */
export function sharedCanned(): Promise<Canned> {
  if (!shared) {
    shared = startCanned();
    shared.then(
      (c) =>
        process.once('exit', () => {
          for (const pid of c.pids)
            try {
              process.kill(pid);
            } catch {
              // already gone
            }
        }),
      () => {},
    );
  }
  return shared;
}

/**
 * A fleet's configuration over canned clusters `urls` (static members `c1`…`cN`, federation off), on top of
 * `base` (the harness's fleet settings), or a standalone one (the first cluster as the control plane,
 * anonymous access) for tools run outside the harness.
 */
export function cannedFleetConfig(urls: string[], base?: Record<string, unknown>): Record<string, unknown> {
  return {
    ...(base ?? {
      controlPlane: { server: urls[0], token: 'bench' },
      authentication: { anonymous: { enabled: true } },
    }),
    federation: false,
    members: {
      mode: 'static',
      clusters: urls.map((server, i) => ({ name: `c${i + 1}`, server, token: 'bench' })),
    },
  };
}
