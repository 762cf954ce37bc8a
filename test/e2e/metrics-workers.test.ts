/**
 * GET /metrics on the Node deployment with several worker processes: the bundled entry (as
 * node-cluster.test.ts starts it) with `--workers 2`. Whichever worker takes the scrape, the answer is
 * the sum over both (asked of the primary over IPC), so apiserver_request_total equals the requests sent,
 * scrape after scrape; a worker that is killed and replaced leaves its counts in the sum; a worker that
 * does not answer in time is counted from its last answer and named.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { startNodeFleet } from '../../deploy/node/server.ts';
import { parseConfig } from '../../src/config/schema.ts';
import { parseExposition } from '../../src/metrics/parse.ts';
import { bindProcessMetrics } from '../../src/metrics/process.ts';
import { bundleNodeEntry, startNodeEntry } from '../helpers/nodeproc.ts';

function startMain(main: string, args: string[]) {
  return startNodeEntry(main, args, { FLEET_TEST_WORKER_HEADER: '1' });
}

/** One request on a connection of its own, so the primary hands each to the next worker. */
function request(url: string, timeoutMs = 30_000): Promise<{ status: number; worker: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, headers: { Accept: 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, worker: String(res.headers['x-fleet-worker']), body }),
      );
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  });
}

/** the configmap lists counted, over every code (the scrapes themselves are left out) */
function listsCounted(m: Map<string, number>): number {
  let n = 0;
  for (const [k, v] of m)
    if (
      k.startsWith('apiserver_request_total{') &&
      k.includes('verb="LIST"') &&
      k.includes('resource="configmaps"')
    )
      n += v;
  return n;
}

describe('npm start --workers 2: /metrics is the sum over the workers', () => {
  let main = '';
  let sims: ServedSimFleet;
  let file: string;
  const procs: ChildProcess[] = [];

  beforeAll(async () => {
    mkdirSync('.cache', { recursive: true });
    main = await bundleNodeEntry('metrics-workers');
    sims = await startSimFleet({ members: ['member1'] });
    file = join(mkdtempSync(join(tmpdir(), 'fleet-metrics-workers-')), 'fleet.json');
    writeFileSync(file, JSON.stringify(sims.staticConfig()));
  });
  afterAll(async () => {
    for (const p of procs) {
      p.kill('SIGCONT');
      p.kill('SIGKILL');
    }
    await sims?.close();
    if (main) rmSync(resolve(main, '..'), { recursive: true, force: true });
  });

  it('counts every request once, never backwards across a worker restart, and names a late worker', async () => {
    const m = startMain(main, ['--workers', '2', '--config', file, '--drain-seconds', '1']);
    procs.push(m.p);
    const url = (await m.waitFor(/listening on (http:\/\/\S+)/))[1]!;
    const cms = `${url}/clusterspaces/member1/api/v1/namespaces/default/configmaps`;

    let sent = 0;
    const send = async (n: number) => {
      const workers = new Set<string>();
      for (let i = 0; i < n; i++) {
        const a = await request(cms);
        expect(a.status).toBe(200);
        workers.add(a.worker);
        sent++;
      }
      return workers;
    };
    const scrape = async (timeoutMs?: number) => {
      const a = await request(`${url}/metrics`, timeoutMs);
      expect(a.status, a.body).toBe(200);
      return { worker: a.worker, text: a.body, m: parseExposition(a.body) };
    };

    expect((await send(20)).size).toBe(2); // both workers served some
    const scrapers = new Set<string>();
    let last = 0;
    for (let i = 0; i < 4; i++) {
      // two scrapes in a row: consecutive connections go to different workers, the answers agree
      for (const s of [await scrape(), await scrape()]) {
        scrapers.add(s.worker);
        expect(listsCounted(s.m)).toBe(sent);
        expect(s.m.get('fleet_metrics_workers_missing')).toBe(0);
        // gauges: in flight summed (only this scrape is), the cluster flag is the latest, not a sum
        expect(s.m.get('apiserver_current_inflight_requests{request_kind="readOnly"}')).toBe(1);
        // counted once over the processes, not once per process
        const up = [...s.m].filter(([k]) => k.startsWith('fleet_cluster_up{'));
        expect(up.length).toBeGreaterThan(0);
        expect(up.every(([, v]) => v === 1)).toBe(true);
        expect(s.m.get('fleet_clusters{state="ready"}')).toBe(up.length);
        expect(listsCounted(s.m)).toBeGreaterThanOrEqual(last);
        last = listsCounted(s.m);
      }
      await send(3);
    }
    expect(scrapers.size).toBe(2); // the same answer whichever worker took the scrape

    // a worker killed (after the last scrape saw its counts) is replaced by one starting from zero
    const s0 = await scrape();
    last = listsCounted(s0.m);
    expect(last).toBe(sent);
    const pids = [...(await send(4))];
    last = sent;
    await scrape(); // the primary holds both workers' counts including these four
    const victim = Number(pids[0]);
    process.kill(victim, 'SIGKILL');
    await m.waitFor(new RegExp(`\\(pid ${victim}\\) exited with signal SIGKILL; restarting it`));
    await m.waitFor(/(worker \d \(pid \d+\) serving[\s\S]*){3}/);
    for (let i = 0; i < 4; i++) {
      const s = await scrape();
      expect(s.worker).not.toBe(String(victim));
      expect(listsCounted(s.m)).toBe(sent);
      expect(listsCounted(s.m)).toBeGreaterThanOrEqual(last);
      last = listsCounted(s.m);
      await send(2);
    }

    // a stopped worker does not answer: the scrape waits 2 s, counts it from its last answer, says so
    const live = await scrape();
    expect(listsCounted(live.m)).toBe(sent);
    const stopped = Number(live.worker);
    process.kill(stopped, 'SIGSTOP');
    try {
      let answer: Awaited<ReturnType<typeof scrape>> | undefined;
      // a connection handed to the stopped worker waits; the next goes to the other one
      for (let i = 0; i < 4 && !answer; i++) answer = await scrape(8_000).catch(() => undefined);
      expect(answer).toBeDefined();
      const t = answer!;
      expect(t.worker).not.toBe(String(stopped));
      expect(t.m.get('fleet_metrics_workers_missing')).toBe(1);
      expect(t.text).toMatch(
        new RegExp(`^# fleet: worker \\d \\(pid ${stopped}\\) did not answer within 2 s`),
      );
      expect(listsCounted(t.m)).toBe(sent);
    } finally {
      process.kill(stopped, 'SIGCONT');
    }
    m.p.kill('SIGTERM');
  }, 180_000);
});

describe('a worker whose primary does not answer', () => {
  it('fails the scrape with a 503 Status rather than pass off its own counts as the server’s', async () => {
    const sims = await startSimFleet({ members: ['member1'] });
    bindProcessMetrics(() => () => Promise.reject(new Error('the primary process did not answer')));
    let fleet: Awaited<ReturnType<typeof startNodeFleet>> | undefined;
    try {
      fleet = await startNodeFleet({ config: parseConfig(sims.staticConfig(), 'test') });
    } finally {
      bindProcessMetrics(undefined);
    }
    try {
      const r = await fetch(`${fleet.url}/metrics`);
      expect(r.status).toBe(503);
      expect(await r.json()).toMatchObject({
        kind: 'Status',
        code: 503,
        reason: 'ServiceUnavailable',
        message:
          "the metrics of the server's processes could not be gathered: the primary process did not answer",
      });
      // a fleet built after the binding is gone serves its own registry
      const own = await startNodeFleet({ config: parseConfig(sims.staticConfig(), 'test') });
      try {
        expect((await fetch(`${own.url}/metrics`)).status).toBe(200);
      } finally {
        await own.stop(200);
      }
    } finally {
      await fleet.stop(200);
      await sims.close();
    }
  }, 60_000);
});
