/**
 * The Node deployment with one process per core: the real entry (deploy/node/main.ts, bundled as
 * `npm run build:node` bundles it, so that workers start in a second, not in tsx's compile time) with
 * `--workers 2`. Both workers answer on the one port, a killed worker is
 * replaced, and SIGTERM drains: the request in flight finishes, the watch ends cleanly (a finished HTTP
 * response, between two events), then everything exits 0.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restartDelay } from '../../deploy/node/cluster.ts';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { isWatchTarget } from '../../deploy/node/http.ts';
import { drainMs, usableCpus, workerCount } from '../../deploy/node/options.ts';
import { type EchoUpstream, startEcho } from '../helpers/echo.ts';
import { bundleNodeEntry, startNodeEntry } from '../helpers/nodeproc.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };

let main = '';

function startMain(args: string[], env: Record<string, string> = {}) {
  return startNodeEntry(main, args, env);
}

interface Answer {
  status: number;
  worker: string;
  body: string;
  /** the response ended as HTTP says (the final chunk arrived), not by a cut connection */
  complete: boolean;
}

/** One request on a connection of its own (so the primary hands each to the next worker). */
function request(url: string, onResponse?: (res: IncomingMessage) => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = get(url, { agent: false, headers: { Accept: 'application/json' } }, (res) => {
      onResponse?.(res);
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      const done = () =>
        resolve({
          status: res.statusCode ?? 0,
          worker: String(res.headers['x-fleet-worker']),
          body,
          complete: res.complete,
        });
      res.on('end', done);
      res.on('aborted', done);
      res.on('error', done);
    });
    req.on('error', reject);
  });
}

async function workersAnswering(url: string, n: number): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const a = await request(url);
    expect(a.status).toBe(200);
    seen.add(a.worker);
  }
  return seen;
}

describe('node deployment options', () => {
  it('--workers / FLEET_WORKERS: one per usable CPU with a config, one for the demo, refused when not a count', () => {
    const cpus = () => 7;
    expect(workerCount([], true, cpus)).toBe(7);
    expect(workerCount([], false, cpus)).toBe(1);
    expect(workerCount(['--workers', '3'], false, cpus)).toBe(3);
    expect(workerCount(['--workers=auto'], false, cpus)).toBe(7);
    for (const bad of ['0', '-1', 'two', '1.5'])
      expect(() => workerCount(['--workers', bad], true, cpus)).toThrow(/not a positive number/);
    expect(drainMs([])).toBe(10_000);
    expect(drainMs(['--drain-seconds', '2.5'])).toBe(2_500);
    expect(() => drainMs(['--drain-seconds', 'soon'])).toThrow(/not a number of seconds/);
  });

  it('a container CPU limit (cgroup cpu.max) caps the default', () => {
    expect(usableCpus('max 100000\n')).toBeGreaterThanOrEqual(1);
    expect(usableCpus('100000 100000\n')).toBe(1);
    expect(usableCpus('150000 100000\n')).toBe(Math.min(2, usableCpus('max 100000')));
  });

  it('restarts back off, doubling up to 30 s', () => {
    expect([1, 2, 3, 4].map(restartDelay)).toEqual([500, 1000, 2000, 4000]);
    expect(restartDelay(20)).toBe(30_000);
  });

  it('knows a watch by its query or its legacy path', () => {
    expect(isWatchTarget('/api/v1/pods?watch=true')).toBe(true);
    expect(isWatchTarget('/api/v1/pods?limit=1&watch=1')).toBe(true);
    expect(isWatchTarget('/api/v1/watch/pods')).toBe(true);
    expect(isWatchTarget('/api/v1/pods?watch=false')).toBe(false);
    expect(isWatchTarget('/api/v1/pods?watchers=true')).toBe(false);
    expect(isWatchTarget('/api/v1/pods')).toBe(false);
  });
});

describe('npm start --workers 2', () => {
  let sims: ServedSimFleet;
  let echo: EchoUpstream;
  let file: string;
  const procs: ChildProcess[] = [];

  beforeAll(async () => {
    mkdirSync('.cache', { recursive: true });
    main = await bundleNodeEntry('node-cluster');
    sims = await startSimFleet({ members: ['member1'] });
    echo = await startEcho();
    const base = sims.staticConfig();
    const clusters = [
      ...(base.members as { clusters: object[] }).clusters,
      { name: 'slow', server: echo.url, token: 'fleet-demo-token' },
    ];
    file = join(mkdtempSync(join(tmpdir(), 'fleet-workers-')), 'fleet.json');
    writeFileSync(file, JSON.stringify({ ...base, members: { mode: 'static', clusters } }));
  });
  afterAll(async () => {
    for (const p of procs) p.kill('SIGKILL');
    await echo?.close(200);
    await sims?.close();
    if (main) rmSync(resolve(main, '..'), { recursive: true, force: true });
  });

  it('refuses a bad worker count at startup with exit code 2', async () => {
    const m = startMain(['--config', file], { FLEET_WORKERS: 'many' });
    procs.push(m.p);
    expect(await m.exited).toBe(2);
    expect(m.output()).toContain('FLEET_WORKERS: "many" is not a positive number');
  });

  it('serves from both workers, replaces a killed one, and drains on SIGTERM', async () => {
    const m = startMain(['--workers', '2', '--config', file, '--drain-seconds', '3'], {
      FLEET_TEST_WORKER_HEADER: '1',
    });
    procs.push(m.p);
    const url = (await m.waitFor(/listening on (http:\/\/\S+)/))[1]!;
    expect(m.output()).toMatch(/2 worker processes \(pids \d+, \d+\) share the port/);
    const cms = `${url}/clusterspaces/member1/api/v1/namespaces/default/configmaps`;

    // the primary hands connections to its workers in turn: both answer
    const first = await workersAnswering(cms, 8);
    expect(first.size).toBe(2);
    expect([...first].every((pid) => /^\d+$/.test(pid))).toBe(true);

    // a worker that dies is forked again (after its backoff), and serves
    const victim = Number([...first][0]);
    process.kill(victim, 'SIGKILL');
    await m.waitFor(
      new RegExp(`worker \\d \\(pid ${victim}\\) exited with signal SIGKILL; restarting it in 0\\.5 s`),
    );
    await m.waitFor(
      /worker \d \(pid \d+\) serving[\s\S]*worker \d \(pid \d+\) serving[\s\S]*worker \d \(pid \d+\) serving/,
    );
    const after = await workersAnswering(cms, 8);
    expect(after.size).toBe(2);
    expect(after.has(String(victim))).toBe(false);

    // SIGTERM with a slow request in flight and a watch open
    echo.delayMs = 1_500;
    const slow = request(`${url}/clusterspaces/slow/api/v1/namespaces/default/configmaps/slow`);
    let watchOpen!: () => void;
    const opened = new Promise<void>((r) => {
      watchOpen = r;
    });
    const watch = request(`${cms}?watch=true`, () => watchOpen());
    await opened;
    const until = Date.now() + 30_000;
    while (!echo.received.some((r) => r.path.endsWith('/configmaps/slow')) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    sims.members.get('member1')!.create(CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'during-drain', namespace: 'default' },
    });
    const t0 = Date.now();
    m.p.kill('SIGTERM');

    const s = await slow;
    expect(s.status).toBe(200);
    expect(s.complete).toBe(true);
    expect(JSON.parse(s.body).path).toBe('/api/v1/namespaces/default/configmaps/slow');

    const w = await watch;
    expect(w.status).toBe(200);
    expect(w.complete).toBe(true); // the watch ended as a finished response, not a cut connection
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2_500); // at the end of the drain window
    const events = w.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
    expect(events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'during-drain')).toBe(true);

    expect(await m.exited).toBe(0);
    expect(m.output()).toMatch(/worker \d \(pid \d+\): told to stop, draining/);
    // nothing listens any more
    await expect(request(cms)).rejects.toThrow(/ECONNREFUSED/);
  }, 180_000);
});
