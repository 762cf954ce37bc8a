/**
 * exec round-trip latency and port-forward throughput: through the fleet vs straight to the simulated
 * member, in the same run.
 *
 * The HTTP-load harness (bench/run.ts, autocannon) measures request/response targets; an upgraded
 * connection is a different shape of load, so this case drives its own clients:
 * - exec: one WebSocket (`v5.channel.k8s.io`) running `cat`; a small message on stdin and its echo on
 *   stdout is one round trip, repeated sequentially; p50/p90/p99 reported;
 * - port-forward: real `kubectl port-forward 0:80` (SPDY tunnelled in WebSocket, as kubectl 1.35 does it)
 *   to the member's echo port; MiB/s of bytes pushed and echoed back through one local connection.
 * The fleet runs in its own process (`deploy/node/main.ts`, static members: one hop, like `direct`); the
 * simulated member and the clients share this process, for both targets alike.
 *
 *   node --import tsx bench/cases/exec.ts [--rounds 500] [--mib 64]
 *
 * Prints a table and a final `BENCH_JSON {…}` line (the same convention as bench/run.ts).
 *
 * In the harness (`npm run bench`, `--only=exec`): `execCase` runs the same measurement once per bench round
 * in the load generator's process (500 round trips and 64 MiB per target; `--quick`: 100 and 4 MiB) and
 * reports the medians over rounds.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'undici';
import { startSimFleet } from '../../deploy/node/demo.ts';
import { ensureKubectl } from '../../scripts/kubectl.mjs';
import { configFile } from '../lib/fleetproc.ts';
import { fmt, table } from '../lib/report.ts';
import { median, percentile } from '../lib/stats.ts';
import type { BenchCase, CaseContext, CustomResult } from './types.ts';

const MEMBER = 'member1';

export interface ExecBenchResult {
  target: string;
  execP50Ms: number;
  execP90Ms: number;
  execP99Ms: number;
  portForwardMiBps: number;
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
    s.on('error', rej);
  });
}

function waitForLine(p: ChildProcess, re: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
  return new Promise((res, rej) => {
    let out = '';
    const t = setTimeout(() => rej(new Error(`timed out waiting for ${re}:\n${out}`)), timeoutMs);
    const on = (d: Buffer) => {
      out += d;
      const m = re.exec(out);
      if (m) {
        clearTimeout(t);
        p.stdout?.off('data', on);
        p.stderr?.off('data', on);
        res(m);
      }
    };
    p.stdout?.on('data', on);
    p.stderr?.on('data', on);
    // a binary that cannot start fails this case, not the whole load process (an unhandled 'error')
    p.once('error', (err) => {
      clearTimeout(t);
      rej(err);
    });
  });
}

/** Sequential stdin → stdout round trips over one exec WebSocket running `cat`. */
export async function execRoundTrips(base: string, podPath: string, rounds: number): Promise<number[]> {
  const url = `${base.replace(/^http/, 'ws')}${podPath}/exec?command=cat&stdin=true&stdout=true`;
  const ws = new WebSocket(url, ['v5.channel.k8s.io']);
  ws.binaryType = 'arraybuffer';
  await new Promise<void>((res, rej) => {
    ws.onopen = () => res();
    ws.onerror = (e) => rej(new Error(`exec WebSocket to ${url} failed: ${(e as ErrorEvent).message ?? e}`));
  });
  const payload = new Uint8Array(65);
  payload.fill(0x61);
  payload[0] = 0;
  let waiter: (() => void) | undefined;
  let got = 0;
  ws.onmessage = (e) => {
    const d = new Uint8Array(e.data as ArrayBuffer);
    if (d[0] === 1) got += d.length - 1;
    if (got >= 64 && waiter) {
      got -= 64;
      const w = waiter;
      waiter = undefined;
      w();
    }
  };
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await new Promise<void>((res) => {
      waiter = res;
      ws.send(payload);
    });
    times.push(performance.now() - t0);
  }
  ws.send(new Uint8Array([255, 0]));
  ws.close();
  return times;
}

/** MiB/s through `kubectl port-forward` to the member's echo port, one connection, pushed and echoed. */
export async function portForwardThroughput(
  server: string,
  ns: string,
  pod: string,
  mib: number,
): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pf-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\ncurrent-context: c\n`,
  );
  const p = spawn(ensureKubectl(), ['--kubeconfig', kubeconfig, '-n', ns, 'port-forward', pod, '0:80'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const m = await waitForLine(p, /Forwarding from 127\.0\.0\.1:(\d+)/);
    const port = Number(m[1]);
    const total = mib * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 0x5a);
    return await new Promise<number>((res, rej) => {
      const s = connect(port, '127.0.0.1');
      let sent = 0;
      let received = 0;
      const t0 = performance.now();
      const pump = () => {
        while (sent < total) {
          sent += chunk.length;
          if (!s.write(chunk)) {
            s.once('drain', pump);
            return;
          }
        }
      };
      s.on('connect', pump);
      s.on('data', (d: Buffer) => {
        received += d.length;
        if (received >= total) {
          const secs = (performance.now() - t0) / 1000;
          s.destroy();
          res(mib / secs);
        }
      });
      s.on('error', rej);
    });
  } finally {
    p.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

async function startFleetProcess(config: unknown): Promise<{ url: string; stop(): void }> {
  const file = configFile(config);
  const port = await freePort();
  const p = spawn(
    process.execPath,
    ['--import', 'tsx', resolve('deploy/node/main.ts'), '--config', file.path],
    {
      // one process: what is measured is the relay, not node:cluster's spread over cores
      env: { FLEET_WORKERS: '1', ...process.env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const m = await waitForLine(p, /listening on (http:\/\/\S+)/)
    .catch((e: unknown) => {
      // a fleet that never said it listens must not outlive the bench
      p.kill('SIGKILL');
      throw e;
    })
    // read once at start (./fleetproc.ts)
    .finally(() => file.remove());
  return { url: m[1]!, stop: () => p.kill('SIGTERM') };
}

export async function runExecBench(opts: { rounds?: number; mib?: number } = {}): Promise<ExecBenchResult[]> {
  const rounds = opts.rounds ?? 500;
  const mib = opts.mib ?? 64;
  const sims = await startSimFleet({ members: [MEMBER] });
  const fleet = await startFleetProcess(sims.staticConfig());
  try {
    const member = sims.members.get(MEMBER)!;
    const pod = member
      .list({ group: '', version: 'v1', resource: 'pods' })
      .find((p: any) => p.status?.phase === 'Running' && p.metadata.namespace === 'shop')!;
    const ns = pod.metadata.namespace!;
    const name = pod.metadata.name!;
    const targets = [
      { target: 'direct', base: sims.memberUrls.get(MEMBER)!, pod: name },
      { target: 'fleet', base: fleet.url, pod: `${name}.clusterspace.${MEMBER}` },
      { target: 'fleet-prefix', base: `${fleet.url}/clusterspaces/${MEMBER}`, pod: name },
    ];
    const out: ExecBenchResult[] = [];
    for (const t of targets) {
      // warm-up, then measure
      await execRoundTrips(t.base, `/api/v1/namespaces/${ns}/pods/${t.pod}`, 20);
      const times = (await execRoundTrips(t.base, `/api/v1/namespaces/${ns}/pods/${t.pod}`, rounds)).sort(
        (a, b) => a - b,
      );
      const mibps = await portForwardThroughput(t.base, ns, t.pod, mib);
      out.push({
        target: t.target,
        execP50Ms: percentile(times, 50),
        execP90Ms: percentile(times, 90),
        execP99Ms: percentile(times, 99),
        portForwardMiBps: mibps,
      });
    }
    return out;
  } finally {
    fleet.stop();
    await sims.close();
  }
}

async function runExecCase(ctx: CaseContext): Promise<CustomResult> {
  const settings = ctx.opts.quick ? { rounds: 100, mib: 4 } : { rounds: 500, mib: 64 };
  const rounds: ExecBenchResult[][] = [];
  for (let r = 0; r < ctx.opts.rounds; r++) {
    const res = await ctx.load<ExecBenchResult[]>('run', settings);
    rounds.push(res);
    ctx.log(
      `   round ${r + 1}/${ctx.opts.rounds}  ` +
        res
          .map(
            (x) =>
              `${x.target} exec p50 ${x.execP50Ms.toFixed(3)} ms, port-forward ${x.portForwardMiBps.toFixed(1)} MiB/s`,
          )
          .join('; '),
    );
  }
  const names = rounds[0]!.map((x) => x.target);
  const med = (t: string, k: keyof Omit<ExecBenchResult, 'target'>) =>
    median(rounds.map((rs) => rs.find((x) => x.target === t)?.[k]));
  // ratios paired by round (measured seconds apart), then the median
  const ratio = (t: string, k: 'execP50Ms' | 'portForwardMiBps') =>
    median(
      rounds.map(
        (rs) =>
          (rs.find((x) => x.target === t)?.[k] ?? Number.NaN) / rs.find((x) => x.target === 'direct')![k],
      ),
    );
  const rows = names.map((t) => [
    t,
    fmt.ms(med(t, 'execP50Ms')),
    fmt.ms(med(t, 'execP90Ms')),
    fmt.ms(med(t, 'execP99Ms')),
    med(t, 'portForwardMiBps').toFixed(1),
    t === 'direct' ? '' : fmt.x(ratio(t, 'execP50Ms')),
    t === 'direct' ? '' : fmt.x(ratio(t, 'portForwardMiBps')),
  ]);
  const text = [
    `   exec: sequential stdin → stdout round trips of 64 bytes over one v5.channel.k8s.io WebSocket running \`cat\` (${settings.rounds} per target per round);`,
    `   port-forward: \`kubectl port-forward 0:80\` to the member's echo port, ${settings.mib} MiB pushed and echoed through one connection;`,
    `   direct = ${MEMBER}'s own URL; fleet = root URL with the fleet name; fleet-prefix = /clusterspaces/${MEMBER}/… (fleet in its own process)`,
    '',
    table(
      [
        'target',
        'exec p50 ms',
        'p90 ms',
        'p99 ms',
        'port-forward MiB/s',
        'exec p50 vs direct',
        'port-forward vs direct',
      ],
      rows,
    ),
    `   (medians of ${rounds.length} round(s); ratios paired by round)`,
  ].join('\n');
  const fleetP50 = ratio('fleet', 'execP50Ms');
  const fleetPf = ratio('fleet', 'portForwardMiBps');
  return {
    text,
    goals: [
      {
        goal: 'exec round trip and port-forward throughput through the fleet vs direct (issue 4 sets no target)',
        ok: undefined,
        info: true,
        detail: `exec p50 ${fmt.ms(med('fleet', 'execP50Ms'))} ms vs ${fmt.ms(med('direct', 'execP50Ms'))} ms direct (${fmt.x(fleetP50)}); port-forward ${fmt.x(fleetPf)} of direct`,
      },
    ],
    figures: { settings, rounds },
  };
}

export const execCase: BenchCase = {
  name: 'exec',
  title: 'exec round trip (WebSocket) and port-forward throughput (kubectl): fleet vs direct to the member',
  run: runExecCase,
  loadActions: { run: (opts: { rounds: number; mib: number }) => runExecBench(opts) },
};

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const arg = (n: string) => {
    const i = process.argv.indexOf(n);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  const results = await runExecBench({ rounds: arg('--rounds'), mib: arg('--mib') });
  const direct = results.find((r) => r.target === 'direct')!;
  console.log(
    'target        exec p50 ms  p90 ms  p99 ms   port-forward MiB/s   vs direct (latency p50, throughput)',
  );
  for (const r of results)
    console.log(
      `${r.target.padEnd(13)} ${r.execP50Ms.toFixed(3).padStart(10)} ${r.execP90Ms.toFixed(3).padStart(7)} ${r.execP99Ms.toFixed(3).padStart(7)} ${r.portForwardMiBps.toFixed(1).padStart(20)}   ${(r.execP50Ms / direct.execP50Ms).toFixed(2)}×, ${(r.portForwardMiBps / direct.portForwardMiBps).toFixed(2)}×`,
    );
  console.log(`BENCH_JSON ${JSON.stringify({ case: 'exec', results })}`);
  process.exit(0);
}
