/**
 * The production Node fleet in a process of its own: deploy/node/main.ts bundled the way
 * scripts/build-node.mjs does, run by plain node (no tsx in memory or on the CPU) with a given
 * configuration. Optionally with the V8 inspector on, so its CPU can be profiled from outside (the
 * profiler runs only between profileStart and profileStop; an idle inspector costs nothing measurable).
 * It runs with the memory settings a deployed fleet process has (deploy/node/memory.ts: what the cluster
 * primary gives its workers, the image and the chart their process); FLEET_MEMORY_TUNING=off, none.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import WebSocket from 'ws';
import { memorySettings } from '../../deploy/node/memory.ts';
import { buildNode } from '../../scripts/build-node.mjs';

export interface FleetProcess {
  url: string;
  pid: number;
  /** starts the V8 CPU profiler (only when started with `inspect`) */
  profileStart(): Promise<void>;
  /** stops it and writes the .cpuprofile to `path` */
  profileStop(path: string): Promise<string>;
  /** full GC (when `gc`), then the process's memoryUsage(), through the inspector (only with `inspect`) */
  memory(gc?: boolean): Promise<NodeJS.MemoryUsage>;
  /** writes a V8 heap snapshot of the process to `path` (only with `inspect`) */
  heapSnapshot(path: string): Promise<string>;
  /** an expression's value (JSON-able) in the process, through the inspector (only with `inspect`) */
  evaluate<T>(expression: string): Promise<T>;
  stop(): void;
}

let built: Promise<string> | undefined;

/** fleet processes still running: killed when the harness exits, however it exits */
const live = new Set<ReturnType<typeof spawn>>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** Bundles once per harness run. */
export function bundleFleet(): Promise<string> {
  built ??= buildNode(resolve('.cache/bench/node/main.js'));
  return built;
}

class Inspector {
  private id = 0;
  private readonly pending = new Map<number, (m: { result?: unknown; error?: unknown }) => void>();
  /** the inspector's notifications (e.g. heap snapshot chunks) */
  onEvent: ((method: string, params: unknown) => void) | undefined;
  constructor(private readonly ws: WebSocket) {
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as {
        id?: number;
        result?: unknown;
        error?: unknown;
        method?: string;
        params?: unknown;
      };
      if (m.id !== undefined) this.pending.get(m.id)?.(m);
      else if (m.method) this.onEvent?.(m.method, m.params);
    });
  }
  static async connect(url: string): Promise<Inspector> {
    const ws = new WebSocket(url);
    await new Promise<void>((res, rej) => {
      ws.once('open', () => res());
      ws.once('error', rej);
    });
    return new Inspector(ws);
  }
  call<T>(method: string, params: object = {}): Promise<T> {
    const id = ++this.id;
    return new Promise((res, rej) => {
      this.pending.set(id, (m) => {
        this.pending.delete(id);
        if (m.error) rej(new Error(`${method}: ${JSON.stringify(m.error)}`));
        else res(m.result as T);
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }
  close(): void {
    this.ws.close();
  }
}

/** a fleet configuration in a file of its own (`--config`), and its removal with its directory */
export function configFile(config: unknown): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
  const path = join(dir, 'fleet.json');
  writeFileSync(path, JSON.stringify(config));
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startFleetProcess(
  config: unknown,
  opts: {
    inspect?: boolean;
    nodeArgs?: string[];
    env?: Record<string, string>;
    /** another build of the entry (e.g. a baseline commit's, for a before/after in one run) */
    bundle?: string;
    /** the process's output after it listens (e.g. --trace-gc lines); unread by default */
    onOutput?: (text: string) => void;
  } = {},
): Promise<FleetProcess> {
  const outfile = opts.bundle ?? (await bundleFleet());
  const file = configFile(config);
  // one process (FLEET_WORKERS=1 unless the caller says otherwise): its CPU and RSS are read from /proc by pid
  const env: NodeJS.ProcessEnv = {
    FLEET_WORKERS: '1',
    ...process.env,
    ...opts.env,
    PORT: '0',
    HOST: '127.0.0.1',
  };
  const memory = memorySettings(env, opts.nodeArgs ?? []);
  const args = [
    ...memory.execArgv,
    ...(opts.nodeArgs ?? []),
    ...(opts.inspect ? ['--inspect=127.0.0.1:0'] : []),
    outfile,
  ];
  const p = spawn(process.execPath, [...args, '--config', file.path], {
    env: { ...env, ...memory.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(p);
  p.once('exit', () => live.delete(p));
  let inspectorUrl: string | undefined;
  let on: (d: Buffer) => void = () => {};
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    const timer = setTimeout(() => rej(new Error(`bundled fleet did not start in 60 s:\n${out}`)), 60_000);
    on = (d: Buffer) => {
      out += d;
      inspectorUrl ??= /Debugger listening on (ws:\/\/\S+)/.exec(out)?.[1];
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    };
    p.stdout.on('data', on);
    p.stderr.on('data', on);
    p.once('exit', (code) => rej(new Error(`bundled fleet exited (${code}):\n${out}`)));
  })
    .catch((e: unknown) => {
      // one that never said it listens must not stay behind
      p.kill('SIGKILL');
      throw e;
    })
    // read once at start: a fleet that listens has it (a bench killed later leaves nothing behind)
    .finally(() => file.remove());
  // keep reading its output (a full pipe would block it), unprinted unless asked for
  p.stdout.off('data', on);
  p.stderr.off('data', on);
  if (opts.onOutput) {
    p.stdout.on('data', (d: Buffer) => opts.onOutput!(String(d)));
    p.stderr.on('data', (d: Buffer) => opts.onOutput!(String(d)));
  }
  p.stdout.resume();
  p.stderr.resume();
  let inspector: Inspector | undefined;
  const session = async () => {
    if (!inspectorUrl) throw new Error('the fleet process was started without its inspector');
    inspector ??= await Inspector.connect(inspectorUrl);
    return inspector;
  };
  return {
    url,
    pid: p.pid!,
    async profileStart() {
      const s = await session();
      await s.call('Profiler.enable');
      await s.call('Profiler.setSamplingInterval', { interval: 200 });
      await s.call('Profiler.start');
    },
    async profileStop(path) {
      const s = await session();
      const { profile } = await s.call<{ profile: unknown }>('Profiler.stop');
      writeFileSync(path, JSON.stringify(profile));
      return path;
    },
    async memory(gc = true) {
      const s = await session();
      if (gc) await s.call('HeapProfiler.collectGarbage');
      const r = await s.call<{ result: { value: NodeJS.MemoryUsage } }>('Runtime.evaluate', {
        expression: 'process.memoryUsage()',
        returnByValue: true,
      });
      return r.result.value;
    },
    async evaluate<T>(expression: string) {
      const s = await session();
      const r = await s.call<{ result: { value: T } }>('Runtime.evaluate', {
        expression,
        returnByValue: true,
      });
      return r.result.value;
    },
    async heapSnapshot(path) {
      const s = await session();
      const chunks: string[] = [];
      s.onEvent = (method, params) => {
        if (method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push((params as { chunk: string }).chunk);
      };
      await s.call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      s.onEvent = undefined;
      writeFileSync(path, chunks.join(''));
      return path;
    },
    stop() {
      inspector?.close();
      p.kill('SIGTERM');
    },
  };
}
