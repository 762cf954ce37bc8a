/** Starts a helper process (./child.ts) and calls its commands; see ./protocol.ts. */
import { type ChildProcess, fork } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { CallMessage, Command, Commands, ReplyMessage, Role } from './protocol.ts';

export interface Host {
  roles: Role[];
  pid: number;
  call<K extends Command>(cmd: K, arg: Commands[K]['arg']): Promise<Commands[K]['result']>;
  /** asks the helper to stop its servers and exit; kills it after `graceMs` */
  exit(graceMs?: number): Promise<void>;
}

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));

/**
 * A helper's stderr, passed through, except that a message repeated many times (say the fleet logging the
 * same error for each of a thousand aborted watches) is printed twice and then only counted: the report
 * stays readable and the count is given when the helper exits.
 */
function relayStderr(input: Readable, label: string): () => void {
  const seen = new Map<string, { line: string; n: number }>();
  let suppressing = false;
  createInterface({ input }).on('line', (line) => {
    // stack frames and the rest of a logged object belong to the message above them
    if (/^\s|^[}\]]/.test(line)) {
      if (!suppressing) process.stderr.write(`${line}\n`);
      return;
    }
    const key = line.replace(/\d+/g, '#');
    const e = seen.get(key) ?? { line, n: 0 };
    e.n++;
    seen.set(key, e);
    suppressing = e.n > 2;
    if (!suppressing) process.stderr.write(`${line}\n`);
  });
  return () => {
    for (const e of seen.values())
      if (e.n > 2)
        process.stderr.write(
          `   (bench helper ${label}: "${e.line.slice(0, 100)}" logged ${e.n} times in all)\n`,
        );
  };
}

export async function startHost(roles: Role[], execArgv: string[] = []): Promise<Host> {
  const child: ChildProcess = fork(CHILD, [], {
    execArgv: ['--import', 'tsx', ...execArgv],
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  const stderrSummary = relayStderr(child.stderr!, roles.join('+'));
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  let exited = false;
  const exitedP = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = true;
      stderrSummary();
      for (const p of pending.values())
        p.reject(new Error(`bench helper (${roles.join('+')}) exited (${signal ?? code})`));
      pending.clear();
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const onExit = () => reject(new Error(`bench helper (${roles.join('+')}) failed to start`));
    child.once('exit', onExit);
    child.on('message', (msg: ReplyMessage) => {
      if (msg.id === 0) {
        child.off('exit', onExit);
        resolve();
        return;
      }
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new Error(`bench helper (${roles.join('+')}): ${msg.error}`));
    });
  });
  return {
    roles,
    pid: child.pid!,
    call<K extends Command>(cmd: K, arg: Commands[K]['arg']): Promise<Commands[K]['result']> {
      if (exited) return Promise.reject(new Error(`bench helper (${roles.join('+')}) is gone`));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, cmd, arg } satisfies CallMessage);
      });
    },
    async exit(graceMs = 5_000) {
      if (exited) return;
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const id = nextId++;
      child.send({ id, cmd: 'exit', arg: null } satisfies CallMessage, () => {});
      await exitedP;
      clearTimeout(t);
    },
  };
}
