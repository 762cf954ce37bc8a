/**
 * The bench's watch floor (bench/lib/floor-watch.mjs, served by floor-proxy.mjs in a process of its own):
 * it must relay every upstream line whole, whatever the cut of the upstream's chunks, each cluster's watch
 * asked with its own RV, so the rates the bench measures through it are those of a correct relay.
 */
import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type FleetProcess, startFleetProcess } from '../../bench/lib/fleetproc.ts';
import { rowsFromTable } from '../../bench/lib/goals-json.ts';
import { formatIssue33, judge, type Row33Check } from '../../bench/lib/goals33.ts';
import { parseStraceSummary, parseWritevTrace } from '../../bench/lib/strace.ts';
import { addedP99FloorRow, burstFloorRow, burstRatios } from '../../bench/lib/watchfloor.ts';
import { runBench } from '../helpers/bench.ts';

const FLOOR = fileURLToPath(new URL('../../bench/lib/floor-proxy.mjs', import.meta.url));
const LINES = 200;

/** a cluster that answers a watch with LINES events, cut into writes mid-line, each write a chunk */
async function cluster(
  name: string,
): Promise<{ server: Server; url: string; asked: string[]; sent: string[] }> {
  const asked: string[] = [];
  const sent = Array.from(
    { length: LINES },
    (_, i) =>
      `{"type":"MODIFIED","object":{"metadata":{"name":"${name}-${i}","pad":"${'x'.repeat(i % 37)}"}}}\n`,
  );
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    asked.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const all = sent.join('');
    let at = 0;
    // cuts of 1 to 97 bytes, one write (one chunk) each, a macrotask apart so the reads see them apart
    const next = () => {
      if (at >= all.length || res.destroyed) return;
      const n = 1 + ((at * 7) % 97);
      res.write(all.slice(at, at + n));
      at += n;
      setImmediate(next);
    };
    next();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, asked, sent };
}

/** reads a watch until `lines` lines came (or the stream ended); returns them and the raw bytes */
function readWatch(url: string, lines: number): Promise<{ status: number; lines: string[]; raw: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { headers: { accept: 'application/json' } }, (res) => {
      let raw = '';
      res.setEncoding('utf8');
      const done = () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, lines: raw.split('\n').filter(Boolean), raw });
      };
      res.on('data', (d: string) => {
        raw += d;
        if (raw.split('\n').length - 1 >= lines) done();
      });
      res.on('end', done);
    });
    req.on('error', reject);
  });
}

const procs: FleetProcess[] = [];
const servers: Server[] = [];
afterAll(() => {
  for (const p of procs) p.stop();
  for (const s of servers) s.close();
});

async function floorOver(clusters: Array<{ url: string }>): Promise<FleetProcess> {
  const config = {
    members: {
      clusters: clusters.map((c, i) => ({ name: `m${i + 1}`, server: c.url, token: 't' })),
    },
  };
  const p = await startFleetProcess(config, { bundle: FLOOR });
  procs.push(p);
  return p;
}

describe('the watch floor proxy', () => {
  it('pipes one cluster byte for byte', async () => {
    const c = await cluster('a');
    servers.push(c.server);
    const floor = await floorOver([c]);
    const got = await readWatch(`${floor.url}/api/v1/pods?watch=true&resourceVersion=7`, LINES);
    expect(got.status).toBe(200);
    expect(got.raw).toBe(c.sent.join(''));
    expect(c.asked).toEqual(['/api/v1/pods?watch=true&resourceVersion=7']);
  });

  it('interleaves three clusters whole line by whole line, each asked with its own RV', async () => {
    const cs = await Promise.all(['a', 'b', 'c'].map(cluster));
    for (const c of cs) servers.push(c.server);
    const floor = await floorOver(cs);
    const got = await readWatch(
      `${floor.url}/api/v1/namespaces/x/pods?watch=true&resourceVersion=${encodeURIComponent('5,6,7')}`,
      3 * LINES,
    );
    expect(got.status).toBe(200);
    // every line whole (it parses), each cluster's in its order, none missing or twice
    for (const l of got.lines) expect(() => JSON.parse(l)).not.toThrow();
    for (const c of cs)
      expect(got.lines.filter((l) => c.sent.includes(`${l}\n`))).toEqual(c.sent.map((s) => s.trimEnd()));
    expect(got.lines).toHaveLength(3 * LINES);
    expect(cs.map((c) => c.asked)).toEqual(
      ['5', '6', '7'].map((rv) => [`/api/v1/namespaces/x/pods?watch=true&resourceVersion=${rv}`]),
    );
  });
});

describe("the floor's rows in issue 33's goals table", () => {
  const rounds = {
    direct: [10_000, 8_000, 12_000],
    fleet: [6_000, 4_000, 9_000],
    floor: [9_000, 6_000, 9_000],
  };

  it('takes medians of per-round ratios, each round paired', () => {
    const b = burstRatios(rounds);
    // floor ÷ direct per round 0.9, 0.75, 0.75; fleet ÷ floor 0.667, 0.667, 1
    expect(b.floorVsDirect).toBeCloseTo(0.75, 6);
    expect(b.fleetVsFloor).toBeCloseTo(2 / 3, 6);
    expect(b.fleetVsDirect).toBeCloseTo(0.6, 6);
  });

  it('prints floor ÷ direct and fleet ÷ floor beside the burst and added-p99 rows, and reads them back', () => {
    const checks: Array<{ case: string; check: Row33Check }> = [
      {
        case: 'merged-watch',
        check: { row: 'burst', where: 'w', ratio: 0.6, ok: judge(0.6, 0.9, true), detail: 'd' },
      },
      { case: 'merged-watch', check: burstFloorRow('w', rounds) },
      {
        case: 'merged-watch',
        check: addedP99FloorRow('w', { direct: [1, 2, 3], fleet: [5, 6, 9], floor: [2, 2.5, 3.5] }),
      },
    ];
    const out = formatIssue33(checks);
    expect(out).toContain(
      'watch burst rate, copy-only floor proxy ÷ direct (what any proxy reaches here): 0.75× (merged-watch, w; 9000 vs 10000 events/s; fleet ÷ floor 0.67×',
    );
    expect(out).toMatch(
      /copy-only floor proxy \(what any proxy adds here\): \+0\.50 ms \(merged-watch, w; .*fleet − floor \+3\.50 ms.*\) \[info\]/,
    );
    const back = rowsFromTable(out);
    expect(back.map((r) => [r.row, r.value])).toEqual([
      ['burst', 0.6],
      ['burst-floor', 0.75],
      ['added-p99-floor', 0.5],
    ]);
  });
});

describe('the merged-watch case', () => {
  it('measures the floor proxy in the same run and prints its rows', async () => {
    const { code, out } = await runBench(['--quick', '--only=merged-watch'], {
      // a few watches: what is tested is that the floor runs beside direct and fleet, not the figures
      env: { BENCH_WATCHES: '20' },
      timeoutMs: 220_000,
    });
    expect(code, out).toBe(0);
    const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '));
    const json = JSON.parse(line!.slice('BENCH_JSON '.length)) as {
      cases: Array<{
        name: string;
        error?: string;
        issue33?: Row33Check[];
        figures?: { fleetGc?: { fleet: Array<{ mainCpuMs?: number; mainWaitMs?: number }> } };
      }>;
    };
    const mw = json.cases.find((c) => c.name === 'merged-watch');
    expect(mw?.error, out).toBeUndefined();
    const floor = mw!.issue33!.find((r) => r.row === 'burst-floor');
    expect(floor?.ratio, out).toBeGreaterThan(0);
    expect(mw!.issue33!.find((r) => r.row === 'added-p99-floor')?.shown, out).toMatch(/ms$/);
    expect(out).toMatch(/^floor proxy \(copy\) +1000 +0 /m);
    expect(out).toMatch(/watch burst rate ÷ direct ≥ 0\.9×: .*floor ÷ direct [\d.]+×, fleet ÷ floor [\d.]+×/);
    // the fleet's main thread in its phases, read from /proc: whether a stall was its own work or a wait for a CPU
    const main = mw!.figures!.fleetGc!.fleet[0]!;
    expect(main.mainCpuMs, out).toBeGreaterThan(0);
    expect(main.mainWaitMs, out).toBeGreaterThanOrEqual(0);
    expect(out).toMatch(
      /fleet main thread per fleet phase \(median\): \d+ ms on a CPU, \d+ ms ready but waiting for one/,
    );
  }, 240_000);
});

describe("strace's summary", () => {
  it('reads the calls by name, with and without errors, leaving out the total', () => {
    const text = [
      '% time     seconds  usecs/call     calls    errors syscall',
      '------ ----------- ----------- --------- --------- ------------------',
      ' 78.20    0.051201         839        61         2 futex',
      ' 19.63    0.012855        3213         4           epoll_pwait',
      '  0.00    0.000000           0         1         1 pkey_alloc',
      '------ ----------- ----------- --------- --------- ------------------',
      '100.00    0.065474          95        66         3 total',
    ].join('\n');
    expect([...parseStraceSummary(text)]).toEqual([
      ['futex', 61],
      ['epoll_pwait', 4],
      ['pkey_alloc', 1],
    ]);
  });
});

describe("strace's writev trace", () => {
  it('counts the calls, their pieces and the bytes written', () => {
    const text = [
      '7029  writev(20, [...], 2)              = 5',
      '7029  writev(21, [...], 3) = 340',
      '7039  +++ exited with 0 +++',
    ].join('\n');
    expect(parseWritevTrace(text)).toEqual({ calls: 2, pieces: 5, bytes: 345 });
  });
});
