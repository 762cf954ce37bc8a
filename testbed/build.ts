/**
 * Builds the test bed's binaries into .cache/testbed/bin/ with the machine's Go, each from its harness
 * module under testbed/go/ (whose go.mod pins the upstream version and whose go.sum is committed).
 * A binary is rebuilt only when its stamp (harness go.mod + go.sum, package, flags, Go version) changed,
 * so a warm run costs a few `go version` calls. One build at a time: Go builds are heavy on 2 cores.
 *
 *   node --import tsx testbed/build.ts [binary…]     (all when none is named)
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN_DIR, ROOT } from './process.ts';

export const GO_DIR = join(ROOT, 'testbed', 'go');

/** The version Kubernetes' commands report (/version, kubectl's skew check): the harness's pinned one. */
const KUBE = { version: 'v1.35.4', major: '1', minor: '35' };
const kubeVersionFlags = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
  `-X ${pkg}.gitVersion=${KUBE.version}`,
  `-X ${pkg}.gitMajor=${KUBE.major}`,
  `-X ${pkg}.gitMinor=${KUBE.minor}`,
  `-X ${pkg}.gitTreeState=clean`,
]);

/** The Karmada release the harness pins (testbed/go/karmada/go.mod), as its commands report it. */
const KARMADA_VERSION = /github\.com\/karmada-io\/karmada (v\S+)/.exec(
  readFileSync(join(GO_DIR, 'karmada', 'go.mod'), 'utf8'),
)![1]!;

export interface Target {
  /** the binary's file name in .cache/testbed/bin/ */
  bin: string;
  /** the harness module's folder under testbed/go/ */
  harness: string;
  /** the package `go build` builds */
  pkg: string;
  ldflags?: string[];
}

export const TARGETS: Target[] = [
  { bin: 'etcd', harness: 'etcd', pkg: 'go.etcd.io/etcd/server/v3' },
  {
    bin: 'kube-apiserver',
    harness: 'kube',
    pkg: 'k8s.io/kubernetes/cmd/kube-apiserver',
    ldflags: kubeVersionFlags,
  },
  {
    bin: 'kube-controller-manager',
    harness: 'kube',
    pkg: 'k8s.io/kubernetes/cmd/kube-controller-manager',
    ldflags: kubeVersionFlags,
  },
  {
    bin: 'kube-scheduler',
    harness: 'kube',
    pkg: 'k8s.io/kubernetes/cmd/kube-scheduler',
    ldflags: kubeVersionFlags,
  },
  { bin: 'kwok', harness: 'kwok', pkg: 'sigs.k8s.io/kwok/cmd/kwok' },
  // Karmada's control plane (testbed/karmada.ts); the webhook sets the PropagationPolicy's permanent id,
  // which propagation relies on
  ...['aggregated-apiserver', 'controller-manager', 'scheduler', 'webhook'].map((c) => ({
    bin: `karmada-${c}`,
    harness: 'karmada',
    pkg: `github.com/karmada-io/karmada/cmd/${c}`,
    ldflags: [`-X github.com/karmada-io/karmada/pkg/version.gitVersion=${KARMADA_VERSION}`],
  })),
];

function goVersion(): string {
  try {
    return execFileSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('the test bed needs Go 1.26.x on PATH (`go` was not found); see testbed/README.md');
  }
}

function stampOf(t: Target, go: string): string {
  const dir = join(GO_DIR, t.harness);
  const h = createHash('sha256');
  for (const part of [
    readFileSync(join(dir, 'go.mod'), 'utf8'),
    readFileSync(join(dir, 'go.sum'), 'utf8'),
    t.pkg,
    (t.ldflags ?? []).join(' '),
    go,
  ]) {
    h.update(part).update('\0');
  }
  return h.digest('hex');
}

function run(cmd: string, args: string[], cwd: string, log: string): Promise<void> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => out.push(c));
    child.on('error', rej);
    child.on('exit', (code) => {
      writeFileSync(log, Buffer.concat(out));
      if (code === 0) res();
      else
        rej(
          new Error(
            `${cmd} ${args.join(' ')} (in ${cwd}) failed (${code}):\n${Buffer.concat(out).toString().slice(-3000)}`,
          ),
        );
    });
  });
}

export interface Built {
  bin: string;
  /** false when the stamp matched and nothing was built */
  built: boolean;
  seconds: number;
}

/** Builds what is missing or stale among `names` (all targets when empty), one at a time. */
export async function build(
  names: string[] = [],
  log: (line: string) => void = (line) => console.log(`testbed: ${line}`),
): Promise<Built[]> {
  const go = goVersion();
  mkdirSync(BIN_DIR, { recursive: true });
  const chosen = names.length ? TARGETS.filter((t) => names.includes(t.bin)) : TARGETS;
  const unknown = names.filter((n) => !TARGETS.some((t) => t.bin === n));
  if (unknown.length)
    throw new Error(
      `unknown binaries: ${unknown.join(', ')} (known: ${TARGETS.map((t) => t.bin).join(', ')})`,
    );
  const results: Built[] = [];
  for (const t of chosen) {
    const out = join(BIN_DIR, t.bin);
    const stampFile = `${out}.stamp`;
    const stamp = stampOf(t, go);
    if (existsSync(out) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
      results.push({ bin: t.bin, built: false, seconds: 0 });
      continue;
    }
    const started = Date.now();
    log(`building ${t.bin} (${t.pkg}, ${go}) …`);
    const ldflags = ['-s', '-w', ...(t.ldflags ?? [])].join(' ');
    await run(
      'go',
      ['build', '-o', `${out}.tmp`, `-ldflags=${ldflags}`, t.pkg],
      join(GO_DIR, t.harness),
      `${out}.build.log`,
    );
    renameSync(`${out}.tmp`, out);
    writeFileSync(stampFile, stamp);
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    log(`built ${t.bin} in ${seconds} s`);
    results.push({ bin: t.bin, built: true, seconds });
  }
  const skipped = results.filter((r) => !r.built).map((r) => r.bin);
  if (skipped.length) log(`up to date: ${skipped.join(', ')}`);
  return results;
}

/** Where the go command keeps a harness's dependency `module` (downloading it if needed): CRDs, stages. */
export function moduleDir(harness: string, module: string): string {
  const out = execFileSync('go', ['mod', 'download', '-json', module], {
    cwd: join(GO_DIR, harness),
    encoding: 'utf8',
  });
  const dir = (JSON.parse(out) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${module} (in testbed/go/${harness}) named no directory`);
  return dir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  build(process.argv.slice(2)).catch((e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
