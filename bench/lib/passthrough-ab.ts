/**
 * Passthrough A/B, paired by round: this tree's bundled fleet, another build (`--base=<bundle>`, e.g. a
 * git archive of an older commit built with scripts/build-node.mjs) and Go's httputil.ReverseProxy, all
 * in front of one canned upstream (a plain node:http server answering a ConfigMap with the headers a
 * kube-apiserver sends), each loaded in turn from a load process of its own. What the harness's
 * passthrough-configmap case measures, without the simulator's CPU next to it and with more rounds:
 * on a shared machine only ratios within a round mean much.
 *
 *   node --import tsx bench/lib/passthrough-ab.ts [--base=<bundle>] [--rounds=5] [--duration=3]
 *     [--warmup=2] [--prewarm=10] [--connections=32] [--workers=1] [--single=2] [--profile=<dir>] [--bare] [--only=a,b]
 *
 * Prints per round and target: req/s, proxy CPU µs per request (the proxy's whole process tree, from
 * /proc), 1-connection p50/p99; then medians of the per-round ratios against Go. `--bare`: also a bare
 * node:http + undici dispatch proxy (the floor on Node, see BARE).
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildNode } from '../../scripts/build-node.mjs';
import { startFleetProcess } from './fleetproc.ts';
import { buildGoProxy, startGoProxy } from './goproxy.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import { treeCpuMs } from './treecpu.ts';

const UPSTREAM = `
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
const body = Buffer.from(JSON.stringify({
  kind: 'ConfigMap', apiVersion: 'v1',
  metadata: { name: 'small', namespace: 'bench', uid: randomUUID(), resourceVersion: '1042',
    creationTimestamp: '2026-01-01T00:00:00Z', labels: { app: 'bench' } },
  data: { 'app.properties': 'color=blue\\nmode=fast\\n', greeting: 'hello' },
}));
const fs = randomUUID(), pl = randomUUID();
createServer((req, res) => {
  res.writeHead(200, {
    'Audit-Id': randomUUID(), 'Cache-Control': 'no-cache, private', 'Content-Type': 'application/json',
    'X-Kubernetes-Pf-Flowschema-Uid': fs, 'X-Kubernetes-Pf-Prioritylevel-Uid': pl,
    'Content-Length': body.length,
  });
  res.end(body);
}).listen(0, '127.0.0.1', function () { process.send({ url: 'http://127.0.0.1:' + this.address().port }); });
`;

/**
 * The floor on Node: node:http in front of undici's dispatch into a keep-alive Agent, hop-by-hop headers
 * dropped, the answer's head and bytes written as they come (no framework, no filters).
 */
const BARE = `
import { createServer } from 'node:http';
import { Agent } from 'undici';
const target = process.argv[1], prefix = '/clusterspaces/member1';
const agent = new Agent({ keepAliveTimeout: 30000, headersTimeout: 0, bodyTimeout: 0 });
const HOP = new Set(['connection','keep-alive','proxy-connection','te','trailer','transfer-encoding','upgrade','host']);
createServer((req, res) => {
  const raw = req.rawHeaders, headers = [];
  for (let i = 0; i < raw.length; i += 2) if (!HOP.has(raw[i].toLowerCase())) headers.push(raw[i], raw[i + 1]);
  agent.dispatch({ origin: target, path: req.url.slice(prefix.length), method: req.method, headers }, {
    onConnect() {}, onError(e) { res.destroy(e); },
    onHeaders(status, rawH) {
      const h = [];
      for (let i = 0; i < rawH.length; i += 2) {
        const k = rawH[i].toString('latin1');
        if (!HOP.has(k.toLowerCase())) h.push(k, rawH[i + 1].toString('latin1'));
      }
      res.writeHead(status, h);
      return true;
    },
    onData(c) { return res.write(c); }, onComplete() { res.end(); },
  });
}).listen(0, '127.0.0.1', function () { process.send({ url: 'http://127.0.0.1:' + this.address().port }); });
`;

function arg(name: string, fallback: string): string {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
}

const median = (xs: number[]) => {
  const s = [...xs].filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : Number.NaN;
};

/** the load generator, in a process of its own (this file, forked with --load) */
async function loadChild(): Promise<void> {
  const { runLoad } = await import('./load.ts');
  process.on('message', (spec: LoadSpec) => {
    runLoad(spec).then(
      (r) => process.send!(r),
      (e: unknown) => process.send!({ error: String(e) }),
    );
  });
  process.send!('ready');
}

function startUpstream(code = UPSTREAM, argv: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', code, ...argv], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((res) => child.once('message', (m: { url: string }) => res({ url: m.url, child })));
}

interface Target {
  name: string;
  url: string;
  pid: number;
}

async function main(): Promise<void> {
  const rounds = Number(arg('rounds', '5'));
  const durationS = Number(arg('duration', '3'));
  const warmupS = Number(arg('warmup', '2'));
  const connections = Number(arg('connections', '32'));
  const workers = arg('workers', '1');
  const singleS = Number(arg('single', '2'));
  const base = arg('base', '');
  const path = '/clusterspaces/member1/api/v1/namespaces/bench/configmaps/small';

  const up = await startUpstream();
  const config = {
    controlPlane: { server: up.url, token: 't' },
    authentication: { anonymous: { enabled: true } },
    members: { mode: 'static', clusters: [{ name: 'member1', server: up.url, token: 't' }] },
  };
  const env = { FLEET_WORKERS: workers };
  const bundle = await buildNode(resolve(`.cache/bench/node/ab-${process.pid}.js`));
  const targets: Target[] = [];
  const stops: Array<() => unknown> = [() => up.child.kill()];
  const go = buildGoProxy();
  if (!('missing' in go)) {
    const g = await startGoProxy(go.binary, up.url, '/clusterspaces/member1');
    stops.push(() => g.stop());
    targets.push({ name: 'go', url: g.url, pid: g.pid });
  }
  if (process.argv.includes('--bare')) {
    const b = await startUpstream(BARE, [up.url]);
    stops.push(() => b.child.kill());
    targets.push({ name: 'bare', url: b.url, pid: b.child.pid! });
  }
  const profileDir = arg('profile', '');
  const fleet = await startFleetProcess(config, { bundle, env, inspect: profileDir !== '' });
  stops.push(() => fleet.stop());
  targets.push({ name: 'fleet', url: fleet.url, pid: fleet.pid });
  if (base) {
    const b = await startFleetProcess(config, { bundle: base, env, inspect: profileDir !== '' });
    stops.push(() => b.stop());
    targets.push({ name: 'base', url: b.url, pid: b.pid });
  }
  // --only=fleet,go: measure these targets only
  const only = arg('only', '');
  if (only) targets.splice(0, targets.length, ...targets.filter((t) => only.split(',').includes(t.name)));
  const loader = fork(new URL(import.meta.url).pathname, ['--load'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  stops.push(() => loader.kill());
  await new Promise((r) => loader.once('message', r));
  const run = (t: Target, c: number, s: number) =>
    new Promise<LoadResult>((res, rej) => {
      loader.once('message', (m: LoadResult | { error: string }) =>
        'error' in m ? rej(new Error(m.error)) : res(m),
      );
      const spec: LoadSpec = {
        url: t.url + path,
        connections: c,
        durationS: s,
        headers: { Accept: 'application/json' },
      };
      loader.send(spec);
    });
  // a cold Node process needs thousands of requests before its code is optimised (on a busy machine 10 s
  // or more): each target gets the same load first, so round 1 measures steady work; --prewarm=0 shows the cold cost
  const prewarmS = Number(arg('prewarm', '10'));
  for (const t of targets) if (prewarmS > 0) await run(t, connections, prewarmS);
  type Fig = { rps: number; cpu: number; p50: number; p99: number };
  const figs = new Map<string, Fig[]>(targets.map((t) => [t.name, []]));
  for (let r = 0; r < rounds; r++) {
    // a different order each round: whoever goes first in a round is not always the same
    const order = targets.map((_, i) => targets[(i + r) % targets.length]!);
    for (const t of order) {
      if (warmupS > 0) await run(t, connections, warmupS);
      const profiling =
        profileDir &&
        r === (arg('profile-round', '') ? Number(arg('profile-round', '')) : rounds - 1) &&
        t.name !== 'go';
      const fp = t.name === 'fleet' ? fleet : undefined;
      if (profiling && fp) await fp.profileStart();
      const c0 = treeCpuMs(t.pid)!;
      const res = await run(t, connections, durationS);
      const cpu = treeCpuMs(t.pid)! - c0;
      if (profiling && fp) {
        mkdirSync(profileDir, { recursive: true });
        await fp.profileStop(resolve(profileDir, `${t.name}.cpuprofile`));
      }
      const one = singleS > 0 ? await run(t, 1, singleS) : undefined;
      const total = res.ok + res.non2xx;
      const f: Fig = {
        rps: res.rps,
        cpu: (cpu * 1000) / total,
        p50: one?.latency.p50 ?? Number.NaN,
        p99: one?.latency.p99 ?? Number.NaN,
      };
      figs.get(t.name)!.push(f);
      console.log(
        `round ${r + 1} ${t.name.padEnd(6)} ${f.rps.toFixed(0).padStart(6)} req/s  ${f.cpu.toFixed(0).padStart(5)} µs/req` +
          `  1-conn p50 ${f.p50.toFixed(2)} p99 ${f.p99.toFixed(2)} ms${res.non2xx || res.errors ? `  (non-2xx ${res.non2xx}, errors ${res.errors})` : ''}`,
      );
    }
  }
  console.log('\nmedians (ratios paired by round, against go):');
  const g = figs.get('go');
  for (const t of targets) {
    const fs = figs.get(t.name)!;
    const ratio = (k: keyof Fig) => (g ? median(fs.map((f, i) => f[k] / g[i]![k])) : Number.NaN);
    const added = (k: keyof Fig) => (g ? median(fs.map((f, i) => f[k] - g[i]![k])) : Number.NaN);
    console.log(
      `${t.name.padEnd(6)} ${median(fs.map((f) => f.rps))
        .toFixed(0)
        .padStart(6)} req/s ${median(fs.map((f) => f.cpu))
        .toFixed(0)
        .padStart(5)} µs/req` +
        `  p50 ${median(fs.map((f) => f.p50)).toFixed(2)} p99 ${median(fs.map((f) => f.p99)).toFixed(2)} ms` +
        (t.name === 'go'
          ? ''
          : `  | vs go: throughput ${ratio('rps').toFixed(2)}× CPU ${ratio('cpu').toFixed(2)}× p50 +${added('p50').toFixed(2)} p99 +${added('p99').toFixed(2)} ms`),
    );
  }
  for (const s of stops) await s();
  process.exit(0);
}

if (process.argv.includes('--load')) void loadChild();
else
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
