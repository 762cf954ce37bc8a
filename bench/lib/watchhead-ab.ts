/**
 * Time to a merged watch's first event (issue 33, watches): open → first ADDED line, through the fleet
 * (default: the head 50 ms after the first member's 200) against strict mode (the head once every member
 * answered: the start before the early head) and against member1 watched directly, on the simulator, with
 * member3 answering `slowMs` late (0: no slow member). Watches from RV "" (initial events: member1 holds
 * the one object, so its ADDED is the first event); the ways alternate, medians over `n` each.
 *   node --import tsx bench/lib/watchhead-ab.ts [n=30] [slowMs=0]
 */
import { startSimFleet } from '../../deploy/node/demo.ts';
import { startFleet } from '../../test/helpers/fleet.ts';
import { median } from './stats.ts';

const n = Number(process.argv[2] ?? 30);
const slowMs = Number(process.argv[3] ?? 0);
const CM = { group: '', version: 'v1', resource: 'configmaps' };
const NS = 'head';

const sims = await startSimFleet({ members: ['member1', 'member2', 'member3'] });
sims.members.get('member1')!.create(CM, { metadata: { name: 'first', namespace: NS }, data: {} } as never);
const cfg = (strict: boolean) => sims.staticConfig({ federation: false, strict });
const early = await startFleet('node', cfg(false));
const strict = await startFleet('node', cfg(true));
sims.members.get('member3')!.faults.latencyMs = slowMs;

async function firstEvent(url: string, headers: Record<string, string> = {}): Promise<number> {
  const ac = new AbortController();
  const t0 = performance.now();
  const res = await fetch(url, { headers, signal: ac.signal });
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  const dec = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buf += dec.decode(chunk, { stream: true });
    if (buf.includes('"ADDED"')) break;
  }
  const ms = performance.now() - t0;
  ac.abort();
  return ms;
}

const path = `/api/v1/namespaces/${NS}/configmaps?watch=true`;
const ways = {
  fleet: () => firstEvent(`${early.url}${path}`),
  strict: () => firstEvent(`${strict.url}${path}`),
  direct: () =>
    firstEvent(`${sims.memberUrls.get('member1')}${path}`, { Authorization: 'Bearer fleet-demo-token' }),
};
const times: Record<string, number[]> = { fleet: [], strict: [], direct: [] };
// warm-up, not counted
for (const f of Object.values(ways)) await f();
for (let i = 0; i < n; i++) for (const [k, f] of Object.entries(ways)) times[k]!.push(await f());
const med = (k: string) => median(times[k]!).toFixed(1);
console.log(
  `first event, median of ${n} (member3 +${slowMs} ms): fleet ${med('fleet')} ms, strict (wait for every member) ${med('strict')} ms, direct ${med('direct')} ms`,
);
await early.stop();
await strict.stop();
await sims.close();
process.exit(0);
