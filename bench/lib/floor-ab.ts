/**
 * Whole-process CPU per MiB of a merged list against its floor, in one run (not a test, not a bench case):
 * canned upstreams (./canned.ts, 10 clusters, +20 ms), one fleet process per given build, and floor
 * proxies (./floor-proxy.mjs: the bodies only concatenated into the answer, no scan), one per `--floor
 * client:write[:KiB]` (default request:piece, the fleet's upstream client and its 256 KiB pieces; KiB: the
 * pieces' size, for `piece`, `pool`, `unsafe`), asked in turn,
 * the order reversed every other round; each process's CPU per MiB it answered (from /proc: user and
 * system apart, 10 ms ticks, so `--answers k` answers per process and round make a round's figure), medians
 * after two warm-up rounds, and each process's per-round ratio to the first one listed.
 *
 *   git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   (cd /tmp/base && node scripts/build-node.mjs)            # and the same for this tree's commit
 *   node --import tsx bench/lib/floor-ab.ts json 10 1000 /tmp/base/dist/node/main.js dist/node/main.js
 *   node --import tsx bench/lib/floor-ab.ts json 7 2000 --answers 3 \
 *     --floor request:piece --floor dispatch:piece --floor http:piece --floor socket:piece \
 *     --floor socket:direct --floor socket:none --floor none:direct
 *
 * Builds are given as bundles (scripts/build-node.mjs) so a working tree others are editing is not what
 * runs. The floor is what reading ten upstream bodies and writing their bytes costs this process: no merge
 * in Node goes below it. `socket:none` (read, nothing written) and `none:direct` (written from memory,
 * nothing read) split it into its two sides; their system time is the kernel's part, on loopback.
 */
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { startFleetProcess } from './fleetproc.ts';

const args = process.argv.slice(2);
const floors: string[] = [];
let answers = 1;
const positional: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--floor') floors.push(args[++i]!);
  else if (args[i] === '--answers') answers = Number(args[++i]);
  else positional.push(args[i]!);
}
const [form = 'json', n = '10', podsS = '1000', ...bundles] = positional;
if (floors.length === 0) floors.push('request:piece');
const pods = Number(podsS);
const canned = await startCanned(2);
const reply = await canned.serve({ clusters: 10, pods, latencyMs: 20 });
const config = cannedFleetConfig(reply.urls);
const procs: Array<{ name: string; p: Awaited<ReturnType<typeof startFleetProcess>> }> = [];
for (const [k, b] of bundles.entries())
  procs.push({ name: `${k}:${b}`, p: await startFleetProcess(config, { bundle: b }) });
const floor = fileURLToPath(new URL('./floor-proxy.mjs', import.meta.url));
for (const f of floors) {
  const [client = 'request', write = 'piece', piece = '256'] = f.split(':');
  const env = { FLOOR_CLIENT: client, FLOOR_WRITE: write, FLOOR_PIECE: piece };
  procs.push({
    name: `floor ${client}:${write}${piece === '256' ? '' : `:${piece}`}`,
    p: await startFleetProcess(config, { bundle: floor, env }),
  });
}

/** user and system CPU ms of a process so far (/proc/<pid>/stat, 10 ms ticks) */
function cpu(pid: number): { user: number; sys: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(f[11]) * 10, sys: Number(f[12]) * 10 };
}

const accept = form === 'table' ? 'application/json;as=Table;v=v1;g=meta.k8s.io' : 'application/json';
/** one answer's size: its bytes, or what the proxy says it read (a floor that writes nothing) */
function once(url: string): Promise<number> {
  return new Promise((res, rej) => {
    get(`${url}/api/v1/pods`, { headers: { accept } }, (r) => {
      let bytes = 0;
      r.on('data', (d: Buffer) => {
        bytes += d.length;
      });
      const said = Number(r.headers['x-floor-bytes']);
      r.on('end', () =>
        r.statusCode === 200 ? res(said || bytes) : rej(new Error(`status ${r.statusCode}`)),
      );
      r.on('error', rej);
    }).on('error', rej);
  });
}

const per = procs.map(() => ({ total: [] as number[], user: [] as number[], sys: [] as number[] }));
const size = procs.map(() => 0);
try {
  for (let r = 0; r < Number(n) + 2; r++) {
    // rotated, one place a round: each process takes every place equally, and none answers twice in a
    // row (reversing every other round let the first and last answer back to back, hot, and kept the
    // middle one cold: 1.3x apart on a quiet machine, whatever build stood there)
    const order = [...procs.keys()].map((_, i) => (i + r) % procs.length);
    for (const k of order) {
      const { p } = procs[k]!;
      const c0 = cpu(p.pid);
      let bytes = 0;
      for (let a = 0; a < answers; a++) bytes += await once(p.url);
      const c1 = cpu(p.pid);
      size[k] = bytes / answers;
      if (r < 2) continue;
      const mib = bytes / 2 ** 20;
      per[k]!.user.push((c1.user - c0.user) / mib);
      per[k]!.sys.push((c1.sys - c0.sys) / mib);
      per[k]!.total.push((c1.user - c0.user + c1.sys - c0.sys) / mib);
    }
  }
} finally {
  for (const { p } of procs) p.stop();
  await canned.stop();
}
const med = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
console.log(
  `10×${pods} ${form}, CPU ms per MiB answered (median of ${n} rounds × ${answers} answers; user + sys; ratio to the first, per round):`,
);
const first = per[0]!.total;
for (const [k, { name }] of procs.entries()) {
  const t = per[k]!;
  const ratios = t.total.map((x, i) => x / first[i]!);
  console.log(
    `  ${name}: ${med(t.total).toFixed(2)} = ${med(t.user).toFixed(2)} + ${med(t.sys).toFixed(2)} (${(size[k]! / 2 ** 20).toFixed(1)} MiB)` +
      `  ×${med(ratios).toFixed(3)} [${ratios.map((x) => x.toFixed(2)).join(' ')}]  per round ${t.total.map((x) => x.toFixed(1)).join(' ')}`,
  );
}
process.exit(0);
