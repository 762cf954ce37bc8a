/**
 * The merged watch's direct body on Node (src/platform/node-streams.ts), its two ways to the socket, paired
 * in one process (not a test): `pushAll` (a tick's lines as one chunk frame of its own, one socket write)
 * against `push` (node:http's res.write: its framing, four writes, a cork and a tick). 1,000 HTTP/1.1
 * watch answers to a client process that only reads; a merged-watch-like line each write, round robin,
 * 100 a macrotask; the writing process's CPU per line.
 *   node --import tsx bench/lib/framewrite-ab.ts [rounds=9] [lines=20000] [bytes=430]
 */
import { fork } from 'node:child_process';
import { createServer, get, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { attachDirect, directPushBodies } from '../../src/platform/node-streams.ts';
import type { PushWriter } from '../../src/util/chunks.ts';
import { median } from './stats.ts';

const W = 1000;
const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] as [string, string]),
);

if (process.argv[2] === 'client') {
  let open = 0;
  for (let i = 0; i < W; i++)
    get(`http://127.0.0.1:${process.argv[3]}/w-${i}`, (res) => {
      res.on('data', () => {});
      if (++open === W) process.send!('open');
    });
} else {
  const rounds = Number(args.rounds ?? 9);
  const total = Number(args.lines ?? 20_000);
  const writers: PushWriter[] = [];
  const server = createServer((_req, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    const { body, writer } = directPushBodies(() => {});
    attachDirect(body, res);
    writers.push(writer);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = fork(
    fileURLToPath(import.meta.url),
    ['client', String((server.address() as AddressInfo).port)],
    {
      execArgv: ['--import', 'tsx'],
    },
  );
  await new Promise((r) => client.once('message', r));
  const n = Number(args.bytes ?? 430);
  const line = new TextEncoder().encode(`{"type":"MODIFIED","object":{"pad":"${'x'.repeat(n - 40)}"}}\n`);
  const ways: Record<string, (w: PushWriter) => void> = {
    frame: (w) => w.pushAll!([line], line.length),
    'res.write': (w) => w.push(line),
  };
  const cpu = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const run = (way: string) =>
    new Promise<number>((done) => {
      const c0 = cpu();
      let i = 0;
      const step = () => {
        for (let b = 0; b < 100 && i < total; b++, i++) ways[way]!(writers[i % W]!);
        if (i < total) setImmediate(step);
        else setImmediate(() => done(((cpu() - c0) * 1000) / total));
      };
      step();
    });
  const out: Record<string, number[]> = { frame: [], 'res.write': [] };
  for (const w of Object.keys(ways)) await run(w);
  for (let r = 0; r < rounds; r++)
    for (const w of r % 2 ? ['res.write', 'frame'] : ['frame', 'res.write']) out[w]!.push(await run(w));
  for (const [w, a] of Object.entries(out))
    console.log(`${w}: ${median(a).toFixed(2)} µs per line (${a.map((x) => x.toFixed(1)).join(' ')})`);
  const ratios = out.frame!.map((x, i) => x / out['res.write']![i]!);
  console.log(
    `frame ÷ res.write per round ${ratios.map((x) => x.toFixed(2)).join(' ')}; median ${median(ratios).toFixed(2)}`,
  );
  client.kill();
  server.closeAllConnections();
  server.close();
}
