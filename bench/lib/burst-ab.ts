/**
 * Same-run A/B of fleet builds on the canned clusters' watch burst (the merged-list-canned case's, alone):
 * every cluster writes its canned MODIFIED pods at once, one merged watch per build reads them, builds in
 * turn burst by burst. Per build: the fleet process's CPU per event (/proc, every thread) and the
 * delivered rate; the direct watches in the same rounds for the rate ratio. The client counts lines
 * and parses every event, as the case's.
 *   npx tsx bench/lib/burst-ab.ts bundles=base:/tmp/base.js,cur:.cache/bench/node/main.js [n=7] [events=500]
 *   [clusters=10] [profile=<dir>] (profile: a .cpuprofile of each build's last burst)
 *   [nodeargs="--trace-gc" out=1] (the fleets' node options, their output on stderr)
 *   [rv0=1] (the watches from RV 0: the fleet takes the canned events for the clusters' initial events)
 * A bundle resolves its packages from where it lies: build a commit's inside its own tree (`git archive
 * <rev> | tar -x -C /tmp/b`, `ln -s $PWD/node_modules /tmp/b`, `node scripts/build-node.mjs` there).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { bundleFleet, type FleetProcess, startFleetProcess } from './fleetproc.ts';
import { median } from './stats.ts';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] as [string, string]),
);
const n = Number(args.n ?? 7);
const events = Number(args.events ?? 500);
const clusters = Number(args.clusters ?? 10);
const PODS = '/api/v1/pods';
const ACCEPT = { Accept: 'application/json' };

/** the process's CPU in ms, every thread (/proc, 10 ms ticks); `sys`: the kernel's part only */
function cpuMs(pid: number, sys = false): number {
  let ms = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const f = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8').split(') ')[1]!.split(' ');
    ms += ((sys ? 0 : Number(f[11])) + Number(f[12])) * 10;
  }
  return ms;
}

async function listRv(url: string): Promise<string> {
  const list = (await (await fetch(`${url}${PODS}`, { headers: ACCEPT })).json()) as {
    metadata: { resourceVersion: string };
  };
  return list.metadata.resourceVersion;
}

/** the client's reads ('data' events) in the last burst */
let reads = 0;

/** opens the watches, reads until `expect` MODIFIED events were parsed: ms */
function burst(urls: string[], expect: number): Promise<number> {
  reads = 0;
  const t0 = performance.now();
  let received = 0;
  const reqs: Array<ReturnType<typeof get>> = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${received}/${expect} after 60 s`)), 60_000);
    const done = () => {
      clearTimeout(timer);
      for (const r of reqs) r.destroy();
      resolve(performance.now() - t0);
    };
    for (const url of urls) {
      const req = get(url, { headers: ACCEPT }, (res: IncomingMessage) => {
        let carry: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          reads++;
          let from = 0;
          for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
            const piece = chunk.subarray(from, nl);
            const line = carry.length ? Buffer.concat([...carry, piece]) : piece;
            carry = [];
            from = nl + 1;
            if (line.length < 2) continue;
            const ev = JSON.parse(line.toString('utf8')) as { type?: string };
            if (ev.type === 'MODIFIED' && ++received === expect) return done();
          }
          if (from < chunk.length) carry.push(chunk.subarray(from));
        });
        res.on('error', () => {});
      });
      req.on('error', reject);
      reqs.push(req);
    }
  });
}

const canned = await startCanned();
const fleets: Array<{
  name: string;
  f: FleetProcess;
  rv: string;
  ms: number[];
  cpu: number[];
  sys: number[];
  client: number[];
  reads: number[];
}> = [];
try {
  const reply = await canned.serve({ clusters, pods: 1000, latencyMs: 20, watchEvents: events });
  const config = cannedFleetConfig(reply.urls);
  const specs = (args.bundles ?? `cur:${await bundleFleet()}`).split(',').map((b) => b.split(':'));
  for (const [name, bundle] of specs) {
    const f = await startFleetProcess(config, {
      bundle,
      inspect: !!args.profile,
      nodeArgs: args.nodeargs ? args.nodeargs.split(' ') : [],
      ...(args.out ? { onOutput: (t: string) => process.stderr.write(`[${name}] ${t}`) } : {}),
    });
    fleets.push({
      name: name!,
      f,
      rv: args.rv0 ? '0' : await listRv(f.url),
      ms: [],
      cpu: [],
      sys: [],
      client: [],
      reads: [],
    });
    console.error(`${name}: started, list RV ${fleets.at(-1)!.rv.slice(0, 40)}…`);
  }
  const directRv = args.rv0 ? '0' : await listRv(reply.urls[0]!);
  const wurl = (base: string, rv: string) =>
    `${base}${PODS}?watch=true&resourceVersion=${encodeURIComponent(rv)}`;
  const expect = clusters * events;
  const direct: number[] = [];
  /** this process's CPU (the client reading and parsing) over each direct burst */
  const directClient: number[] = [];
  /** the client's reads per direct burst (a fleet writing fewer, larger chunks costs the client less) */
  const directReads: number[] = [];
  const own = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  for (const x of fleets) await burst([wurl(x.f.url, x.rv)], expect);
  for (let r = 0; r < n; r++) {
    console.error(`round ${r + 1}`);
    if (args.out) await new Promise((res) => setTimeout(res, 500));
    const d0 = own();
    direct.push(
      await burst(
        reply.urls.map((u) => wurl(u, directRv)),
        expect,
      ),
    );
    directClient.push(own() - d0);
    directReads.push(reads);
    // builds in turn, the order alternating round by round
    const order = r % 2 ? [...fleets].reverse() : fleets;
    for (const x of order) {
      const profiling = args.profile && r === n - 1;
      if (profiling) await x.f.profileStart();
      const c0 = cpuMs(x.f.pid);
      const s0 = cpuMs(x.f.pid, true);
      const o0 = own();
      x.ms.push(await burst([wurl(x.f.url, x.rv)], expect));
      x.cpu.push(cpuMs(x.f.pid) - c0);
      x.sys.push(cpuMs(x.f.pid, true) - s0);
      x.client.push(own() - o0);
      x.reads.push(reads);
      if (profiling) console.log(await x.f.profileStop(join(args.profile!, `burst-${x.name}.cpuprofile`)));
    }
  }
  const rate = (ms: number) => (expect * 1000) / ms;
  const d = median(direct.map(rate));
  const us = (ms: number) => ((ms * 1000) / expect).toFixed(1);
  console.log(
    `direct: ${d.toFixed(0)} events/s (median of ${n}); the client's CPU per event ${us(median(directClient))} µs, its reads per 100 events ${((median(directReads) * 100) / expect).toFixed(1)}`,
  );
  for (const x of fleets) {
    const f = median(x.ms.map(rate));
    console.log(
      `${x.name}: ${f.toFixed(0)} events/s, ${(f / d).toFixed(2)}x direct; CPU per event median ${us(median(x.cpu))} µs (${us(median(x.sys))} µs of it the kernel's; the client's ${us(median(x.client))} µs, its reads per 100 events ${((median(x.reads) * 100) / expect).toFixed(1)}); per round ${x.cpu.map((c) => ((c * 1000) / expect).toFixed(0)).join(' ')}; rate ratio per round ${x.ms.map((m, k) => (direct[k]! / m).toFixed(2)).join(' ')}`,
    );
  }
  if (fleets.length === 2) {
    const [a, b] = fleets as [(typeof fleets)[0], (typeof fleets)[0]];
    const ratios = a.cpu.map((c, k) => b.cpu[k]! / c);
    console.log(
      `${b.name} ÷ ${a.name} CPU per round: ${ratios.map((x) => x.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(2)}`,
    );
  }
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  for (const x of fleets) x.f.stop();
  await canned.stop();
  process.exit();
}
