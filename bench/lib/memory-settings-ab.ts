/**
 * Same-run A/B of the fleet's memory settings (deploy/node/memory.ts): one fleet process with them and one
 * with FLEET_MEMORY_TUNING=off, same bundle, over the same canned clusters, asked in turn. Prints per
 * round the CPU of a merged JSON list per MiB (10 × 1,000 pods) and of a passthrough GET per request
 * (`c` concurrent, one pod), and at the end each side's peak RSS; medians of the rounds.
 *   node --import tsx bench/lib/memory-settings-ab.ts [rounds=5] [lists=4] [gets=3000] [c=16] [bundle=…]
 *     [on="K=V …"] [off="K=V …"]  (a side's environment instead, e.g. on="FLEET_MEMORY_TUNING=off MALLOC_ARENA_MAX=2";
 *     off="FLEET_MEMORY_TUNING=on" to set one change against the settings as they are)
 */
import { Agent, request } from 'node:http';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { CANNED_NS } from './canned-bodies.ts';
import { bundleFleet, startFleetProcess } from './fleetproc.ts';
import { procMemory, resetPeak } from './proc.ts';
import { median, processCpuMs } from './stats.ts';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
);
const rounds = Number(args.rounds ?? 5);
const lists = Number(args.lists ?? 4);
const gets = Number(args.gets ?? 3000);
const conc = Number(args.c ?? 16);
const agent = new Agent({ keepAlive: true, maxSockets: conc });

function get(url: string): Promise<number> {
  return new Promise((res, rej) => {
    request(url, { agent, headers: { Accept: 'application/json' } }, (r) => {
      if (r.statusCode !== 200) rej(new Error(`${url}: HTTP ${r.statusCode}`));
      let bytes = 0;
      r.on('data', (c: Buffer) => (bytes += c.length));
      r.on('end', () => res(bytes));
      r.on('error', rej);
    })
      .on('error', rej)
      .end();
  });
}

async function many(url: string, n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: conc }, async () => {
      while (next++ < n) await get(url);
    }),
  );
}

const canned = await startCanned();
try {
  const reply = await canned.serve({ clusters: 10, pods: 1000, latencyMs: 20 });
  const config = cannedFleetConfig(reply.urls);
  const bundle = args.bundle ?? (await bundleFleet());
  const sides = [];
  const envOf = (spec: string | undefined, otherwise: Record<string, string>): Record<string, string> =>
    spec
      ? Object.fromEntries(
          spec
            .split(/\s+/)
            .filter(Boolean)
            .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
        )
      : otherwise;
  for (const [name, env] of [
    [args.on ? `on (${args.on})` : 'settings on', envOf(args.on, { FLEET_MEMORY_TUNING: 'on' })],
    [args.off ? `off (${args.off})` : 'settings off', envOf(args.off, { FLEET_MEMORY_TUNING: 'off' })],
  ] as const)
    sides.push({
      name,
      f: await startFleetProcess(config, { bundle, env }),
      list: [] as number[],
      pass: [] as number[],
    });
  const listUrl = (u: string) => `${u}/api/v1/pods`;
  const podUrl = (u: string) => `${u}/clusterspaces/c1/api/v1/namespaces/${CANNED_NS}/pods/p-0`;
  // warm-up: the JIT, on both paths
  for (const s of sides) {
    for (let i = 0; i < 3; i++) await get(listUrl(s.f.url));
    await many(podUrl(s.f.url), 2000);
    resetPeak(s.f.pid);
  }
  for (let r = 0; r < rounds; r++) {
    for (const s of r % 2 ? [...sides].reverse() : sides) {
      let c0 = processCpuMs(s.f.pid)!;
      let bytes = 0;
      for (let i = 0; i < lists; i++) bytes += await get(listUrl(s.f.url));
      s.list.push((processCpuMs(s.f.pid)! - c0) / (bytes / 2 ** 20));
      c0 = processCpuMs(s.f.pid)!;
      await many(podUrl(s.f.url), gets);
      s.pass.push(((processCpuMs(s.f.pid)! - c0) * 1000) / gets);
      console.log(
        `round ${r + 1} ${s.name}: list ${s.list.at(-1)!.toFixed(2)} ms CPU/MiB, passthrough ${s.pass.at(-1)!.toFixed(0)} µs CPU/request`,
      );
    }
  }
  for (const s of sides) {
    const m = procMemory(s.f.pid);
    console.log(
      `${s.name}: list ${median(s.list).toFixed(2)} ms/MiB, passthrough ${median(s.pass).toFixed(0)} µs/req (medians of ${rounds}); peak RSS ${((m?.hwm ?? 0) / 2 ** 20).toFixed(1)} MiB, now ${((m?.rss ?? 0) / 2 ** 20).toFixed(1)} MiB`,
    );
    s.f.stop();
  }
  const [on, off] = sides as [(typeof sides)[0], (typeof sides)[0]];
  const paired = (k: 'list' | 'pass') => median(on[k].map((v, i) => v / off[k][i]!));
  console.log(
    `on ÷ off, paired by round: list CPU/MiB ${paired('list').toFixed(3)}×, passthrough CPU/request ${paired('pass').toFixed(3)}×`,
  );
} finally {
  await canned.stop();
  agent.destroy();
}
