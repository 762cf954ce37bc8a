/**
 * Starting and stopping the bed's processes: each in a process group of its own, stdout and stderr into
 * `<dir>/<name>.log`, ready when a condition holds (polled, never a fixed sleep), and killed with its
 * whole group on stop() or when this Node process exits, however it exits short of SIGKILL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request as httpPlain } from 'node:http';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CACHE = join(ROOT, '.cache', 'testbed');
export const BIN_DIR = join(CACHE, 'bin');
export const RUN_DIR = join(CACHE, 'run');

/** A binary built by testbed/build.ts; throws with the command to run when it is missing. */
export function binary(name: string): string {
  const path = join(BIN_DIR, name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`node --import tsx testbed/build.ts\``);
  return path;
}

/** A free loopback port, picked by the OS (closed again before the caller's process binds it). */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => res(port));
    });
  });
}

export interface Proc {
  name: string;
  pid: number;
  log: string;
  /** resolves with the exit code (or signal) when the process has ended */
  exited: Promise<string>;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let hooked = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Kills every group this process started when it exits: synchronously on 'exit', and through a small
 * watchdog shell for the exits Node never sees (SIGKILL, a crash in native code): it polls this
 * process and then kills each group listed in `groupsFile`.
 */
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const child of live) killGroup(child, 'SIGKILL');
    rmSync(groupsFile, { force: true });
  });
  mkdirSync(RUN_DIR, { recursive: true });
  writeFileSync(groupsFile, '');
  const watchdog = spawn(
    'sh',
    [
      '-c',
      'while kill -0 "$1" 2>/dev/null; do sleep 2; done; ' +
        '[ -f "$2" ] && for g in $(cat "$2"); do kill -9 "-$g" 2>/dev/null; done; rm -f "$2"',
      'bed-watchdog',
      String(process.pid),
      groupsFile,
    ],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();
}

const groupsFile = join(RUN_DIR, `.groups-${process.pid}`);

/** The last lines of a log, for errors that say why a process did not come up. */
export function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export function startProcess(opts: {
  name: string;
  bin: string;
  args: string[];
  dir: string;
  env?: Record<string, string>;
}): Proc {
  mkdirSync(opts.dir, { recursive: true });
  const log = join(opts.dir, `${opts.name}.log`);
  const fd = openSync(log, 'a');
  const child = spawn(opts.bin, opts.args, {
    cwd: opts.dir,
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, ...opts.env },
  });
  closeSync(fd);
  hookExit();
  live.add(child);
  if (child.pid) appendFileSync(groupsFile, `${child.pid}\n`);
  const exited = new Promise<string>((res) => {
    child.on('exit', (code, signal) => {
      live.delete(child);
      // only live groups stay listed: a pid freed here may be reused by a stranger's process group
      if (existsSync(groupsFile)) writeFileSync(groupsFile, [...live].map((c) => `${c.pid}\n`).join(''));
      res(signal ?? String(code));
    });
    child.on('error', (e) => {
      live.delete(child);
      res(`spawn error: ${e.message}`);
    });
  });
  const stop = async () => {
    if (!live.has(child)) return;
    killGroup(child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    killGroup(child, 'SIGKILL'); // anything the process left behind in its group
  };
  return { name: opts.name, pid: child.pid ?? -1, log, exited, stop };
}

export interface TlsClient {
  ca?: string;
  cert?: string;
  key?: string;
}

/** One HTTP(S) request (the TLS options apply to https: URLs); resolves with status and body text (never throws on an HTTP status). */
export function httpsRequest(
  url: string,
  tls: TlsClient,
  opts: { method?: string; body?: string; contentType?: string; timeoutMs?: number } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const send = url.startsWith('http:') ? httpPlain : request;
    const req = send(
      url,
      {
        method: opts.method ?? 'GET',
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        rejectUnauthorized: Boolean(tls.ca),
        headers: opts.body
          ? { 'content-type': opts.contentType ?? 'application/json', accept: 'application/json' }
          : { accept: 'application/json' },
        timeout: opts.timeoutMs ?? 10_000,
      },
      (resp) => {
        const chunks: Buffer[] = [];
        resp.on('data', (c: Buffer) => chunks.push(c));
        resp.on('end', () => res({ status: resp.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        resp.on('error', rej);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url}: timed out`)));
    req.on('error', rej);
    req.end(opts.body);
  });
}

/**
 * Polls `check` until it returns true; fails early when the process exits, and after `timeoutMs` with
 * the last lines of its log.
 */
export async function waitUntil(
  proc: Proc | undefined,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let ended: string | undefined;
  proc?.exited.then((code) => {
    ended = code;
  });
  let delay = 100;
  for (;;) {
    if (ended !== undefined) throw new Error(`${what}: ${proc?.name} exited (${ended}):\n${tail(proc!.log)}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new Error(`${what}: not ready after ${timeoutMs} ms${proc ? `:\n${tail(proc.log)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1000);
  }
}

/** Polls `https://…<path>` until it answers 200 (the components' /readyz, /healthz). */
export function waitHealthy(proc: Proc, url: string, tls: TlsClient, timeoutMs?: number): Promise<void> {
  return waitUntil(
    proc,
    `${proc.name} ${url}`,
    async () => (await httpsRequest(url, tls, { timeoutMs: 5000 })).status === 200,
    timeoutMs,
  );
}
