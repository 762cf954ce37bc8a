/**
 * The Go module of client-go tests (test/clientgo): built once into a test binary (`go test -c`, cached in
 * .cache/clientgo/ under a hash of the module's sources, so an unchanged module is not rebuilt), then run
 * one Go test at a time through `go tool test2json`, whose events say which Go tests and subtests passed.
 *
 * A fresh machine needs only Go (1.25+): the first build downloads the modules go.sum pins (`go mod
 * download`) into the machine's module cache.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const GO_MODULE = resolve('test/clientgo');
/** the runnable controller example, whose reconciler the module tests (a `replace` in its go.mod) */
const EXAMPLE_MODULE = resolve('examples/controller');
const GO = process.env.FLEET_GO ?? 'go';
// never fetch another Go toolchain behind the tests' back
const GO_ENV = { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' };

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? sources(join(dir, e.name))
        : /\.go$|^go\.(mod|sum)$/.test(e.name)
          ? [join(dir, e.name)]
          : [],
    )
    .sort();
}

let built: Promise<{ binary: string; ms: number; cached: boolean }> | undefined;

/** The test binary, built (or found in the cache) once per test process. */
export function goTestBinary(): Promise<{ binary: string; ms: number; cached: boolean }> {
  built ??= (async () => {
    const h = createHash('sha256');
    for (const f of [...sources(GO_MODULE), ...sources(EXAMPLE_MODULE)]) h.update(f).update(readFileSync(f));
    const dir = resolve('.cache/clientgo');
    const binary = join(dir, `clientgo-${h.digest('hex').slice(0, 16)}.test`);
    if (existsSync(binary)) return { binary, ms: 0, cached: true };
    mkdirSync(dir, { recursive: true });
    const t0 = Date.now();
    const opts = { cwd: GO_MODULE, env: GO_ENV, maxBuffer: 64 << 20 };
    await run(GO, ['mod', 'download'], { ...opts, timeout: 900_000 });
    const tmp = `${binary}.${process.pid}`;
    await run(GO, ['test', '-c', '-o', tmp, '.'], { ...opts, timeout: 1_200_000 });
    renameSync(tmp, binary);
    // binaries of earlier sources are of no use any more
    for (const old of readdirSync(dir))
      if (old.endsWith('.test') && join(dir, old) !== binary) rmSync(join(dir, old));
    return { binary, ms: Date.now() - t0, cached: false };
  })();
  return built;
}

/** The Go tests the binary holds (`-test.list`). */
export async function goTestList(binary: string): Promise<string[]> {
  const { stdout } = await run(binary, ['-test.list', '.'], { cwd: GO_MODULE });
  return stdout.split('\n').filter((l) => l.startsWith('Test'));
}

export interface GoEvent {
  Action: 'start' | 'run' | 'pause' | 'cont' | 'pass' | 'fail' | 'skip' | 'output' | 'bench';
  Test?: string;
  Output?: string;
  Elapsed?: number;
}

export interface GoResult {
  /** the top-level test's outcome (`undefined`: the binary ended without one, e.g. it crashed or hung) */
  outcome: 'pass' | 'fail' | 'skip' | undefined;
  /** every subtest with its outcome, in the order they ended */
  subtests: Array<{ name: string; outcome: string; elapsed?: number }>;
  /** the whole output, for a failure's message */
  output: string;
}

/**
 * Runs one Go test (`-test.run ^name$`) with `env`, parsing test2json's events. The binary is killed
 * after `timeoutMs` (its own `-test.timeout` is a little shorter, so a hang prints goroutine stacks).
 */
export function runGoTest(
  binary: string,
  name: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<GoResult> {
  return new Promise((done) => {
    const child = spawn(
      GO,
      [
        'tool',
        'test2json',
        '-t',
        '-p',
        'clientgo',
        binary,
        '-test.v=test2json',
        '-test.run',
        `^${name}$`,
        '-test.timeout',
        `${Math.max(10, Math.floor(timeoutMs / 1000) - 10)}s`,
      ],
      { cwd: GO_MODULE, env: { ...GO_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const result: GoResult = { outcome: undefined, subtests: [], output: '' };
    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      buf += d;
      let i = buf.indexOf('\n');
      while (i >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        i = buf.indexOf('\n');
        let e: GoEvent;
        try {
          e = JSON.parse(line) as GoEvent;
        } catch {
          result.output += `${line}\n`;
          continue;
        }
        if (e.Action === 'output') result.output += e.Output ?? '';
        if (e.Action === 'pass' || e.Action === 'fail' || e.Action === 'skip') {
          if (e.Test === name) result.outcome = e.Action;
          else if (e.Test) result.subtests.push({ name: e.Test, outcome: e.Action, elapsed: e.Elapsed });
        }
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      result.output += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', () => {
      clearTimeout(timer);
      done(result);
    });
  });
}
