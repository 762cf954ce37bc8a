/**
 * The Go reference proxy (../goproxy/main.go): built with the local Go toolchain into .cache/goproxy when
 * `go` exists (rebuilt when the source is newer), started in front of one upstream with GOMAXPROCS set to
 * every core (Go's default, said explicitly so the report can name it next to the fleet's worker count).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const GO_INSTALL_HINT =
  'Go is not installed: skipping the Go httputil.ReverseProxy baseline. Install it with `apt-get install -y golang-go` (Debian, Go 1.19) and run again.';

const SOURCE = resolve('bench/goproxy/main.go');
const BINARY = resolve('.cache/goproxy');

export interface GoBuild {
  binary: string;
  version: string;
}

/** Builds the proxy; `{ missing: true }` when there is no Go toolchain, throws when the build fails. */
export function buildGoProxy(): GoBuild | { missing: true } {
  const env = { ...process.env };
  // `go` needs a build cache; give it one inside the project when HOME is not set (CI containers)
  if (!env.GOCACHE && !env.HOME && !env.XDG_CACHE_HOME) env.GOCACHE = resolve('.cache/go-build');
  const v = spawnSync('go', ['version'], { encoding: 'utf8', env });
  if (v.error || v.status !== 0) return { missing: true };
  const version = v.stdout.trim();
  const fresh = existsSync(BINARY) && statSync(BINARY).mtimeMs >= statSync(SOURCE).mtimeMs;
  if (!fresh) {
    mkdirSync(resolve('.cache'), { recursive: true });
    const b = spawnSync('go', ['build', '-o', BINARY, SOURCE], { encoding: 'utf8', env });
    if (b.status !== 0) throw new Error(`go build of ${SOURCE} failed:\n${b.stderr || b.stdout}`);
  }
  return { binary: BINARY, version };
}

export interface GoProxy {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** The cores the Go proxy may run on (GOMAXPROCS): every core, as the fleet's worker processes get. */
export const GO_PROCS = availableParallelism();

export async function startGoProxy(binary: string, target: string, stripPrefix: string): Promise<GoProxy> {
  const child: ChildProcess = spawn(
    binary,
    ['-listen', '127.0.0.1:0', '-target', target, '-strip-prefix', stripPrefix],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, GOMAXPROCS: String(GO_PROCS) } },
  );
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error('goproxy did not start within 10 s')), 10_000);
    child.once('exit', (code) => reject(new Error(`goproxy exited (${code}) before listening`)));
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      const m = /^listening (\S+)/.exec(line);
      if (m) resolveUrl(m[1]!);
      else reject(new Error(`goproxy: unexpected output: ${line}`));
    });
  });
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}
