/**
 * A merged list's output write alone, another tree's Node server against this one's, in one process (not
 * a test, not a bench case): each tree's deploy/node/http.ts serving its src/list/route.ts listBody over
 * a generator of 256 KiB ByteSink pieces (10,000 items of 3 KiB, as the merge fills them: no split, no
 * rewrite), each answer read by curl (another process); this process's CPU per MiB, `answers` answers a
 * round, the trees alternating (the order flipped each round), medians and the median of the ratios.
 *
 *   git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   node --import tsx bench/lib/output-ab.ts /tmp/base [rounds=15] [answers=3]
 *
 * floor-ab.ts measures whole processes (the scanner and the rewriting too): a change of a few percent to
 * the writing alone drowns there on the shared machine; here it is the whole figure.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

const [baseRoot, roundsS = '15', answersS = '3'] = process.argv.slice(2);
if (!baseRoot) throw new Error('usage: output-ab.ts <base tree> [rounds] [answers]');
const trees = [resolve(baseRoot), resolve(import.meta.dirname, '../..')];
const ITEM = new Uint8Array(3072).fill(0x61);
const ITEMS = 10_000;
const MIB = (ITEM.length * ITEMS) / 2 ** 20;

const urls: string[] = [];
for (const t of trees) {
  const { serveFetch } = await import(`${t}/deploy/node/http.ts`);
  const { listBody } = await import(`${t}/src/list/route.ts`);
  const { ByteSink } = await import(`${t}/src/util/bytes.ts`);
  async function* pieces(): AsyncGenerator<Uint8Array> {
    const out = new ByteSink(256 * 1024);
    for (let i = 0; i < ITEMS; i++) {
      if (out.free < 8192) yield out.take();
      out.bytes(ITEM);
    }
    yield out.take();
  }
  const served = await serveFetch(
    () => new Response(listBody(pieces()), { headers: { 'Content-Type': 'application/json' } }),
  );
  urls.push(`${served.url}/api/v1/pods`);
}

const curl = (url: string) =>
  new Promise<void>((res, rej) =>
    execFile('curl', ['-s', '-o', '/dev/null', url], (e) => (e ? rej(e) : res())),
  );
/** this process's CPU ms per MiB over `n` answers */
async function measure(url: string, n: number): Promise<number> {
  const c = process.cpuUsage();
  for (let i = 0; i < n; i++) await curl(url);
  const u = process.cpuUsage(c);
  return (u.user + u.system) / 1000 / (n * MIB);
}

const answers = Number(answersS);
for (const u of urls) await measure(u, answers);
const ms: number[][] = [[], []];
const ratios: number[] = [];
for (let k = 0; k < Number(roundsS); k++) {
  const m: number[] = [];
  for (const i of k & 1 ? [1, 0] : [0, 1]) m[i] = await measure(urls[i]!, answers);
  ms[0]!.push(m[0]!);
  ms[1]!.push(m[1]!);
  ratios.push(m[1]! / m[0]!);
}
const median = (x: number[]) => [...x].sort((a, b) => a - b)[x.length >> 1]!;
console.log(
  `output write, server CPU ms/MiB (median of ${roundsS} rounds × ${answers}): base ${median(ms[0]!).toFixed(3)}, ` +
    `this ${median(ms[1]!).toFixed(3)}, this ÷ base ${median(ratios).toFixed(3)} [${ratios.map((x) => x.toFixed(2)).join(' ')}]`,
);
process.exit(0);
