/**
 * Shared reads in workerd (miniflare): requests of one isolate share one upstream call (each request
 * reads plain bytes the starting request read, never its stream: workerd forbids touching another
 * request's I/O objects), a request that goes away leaves the others reading, and what is kept lands in
 * the location's Cache API, so an isolate with an empty memory still answers without asking upstream.
 * The worker is test/e2e/fixtures/shared-reads-worker.ts: the fleet's SharedReads and Cache API adapter.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_COMPATIBILITY } from '../../scripts/build-worker.mjs';

const BUNDLE = resolve('.cache/shared-reads-worker/worker.js');
const CHUNK = 16 * 1024;

let mf: Miniflare;
let url: string;
let upstream: Server;
const asked: Array<{ path: string; user: string }> = [];
let release: (() => void) | undefined;

/** /api/v1/slow… holds its body after the first chunk until the test releases it; the rest answer at once. */
function serve(req: IncomingMessage, res: ServerResponse) {
  const user = String(req.headers['impersonate-user'] ?? '');
  asked.push({ path: req.url ?? '', user });
  res.writeHead(200, { 'content-type': 'application/json' });
  if (!req.url?.startsWith('/api/v1/slow')) {
    res.end(JSON.stringify({ user, n: asked.length }));
    return;
  }
  res.write(`{"user":${JSON.stringify(user)},"pad":"`);
  const gate = new Promise<void>((r) => {
    release = r;
  });
  void gate.then(async () => {
    for (let i = 0; i < 16; i++) {
      res.write('x'.repeat(CHUNK));
      await new Promise((r) => setImmediate(r));
    }
    res.end('"}');
  });
}

beforeAll(async () => {
  await build({
    entryPoints: ['test/e2e/fixtures/shared-reads-worker.ts'],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser', 'import'],
    mainFields: ['browser', 'module', 'main'],
    outfile: BUNDLE,
    logLevel: 'warning',
  });
  upstream = createServer(serve);
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const port = (upstream.address() as AddressInfo).port;
  mf = new Miniflare({
    name: 'shared-reads',
    modules: true,
    scriptPath: BUNDLE,
    // as wrangler.toml sets them (request.signal aborting, node:crypto)
    ...WORKER_COMPATIBILITY,
    bindings: { UPSTREAM: `http://127.0.0.1:${port}` },
    host: '127.0.0.1',
    port: 0,
  });
  url = (await mf.ready).origin;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
  upstream?.closeAllConnections();
  await new Promise((r) => upstream?.close(r));
});

const get = (path: string, user: string, signal?: AbortSignal) =>
  fetch(`${url}${path}`, { headers: { 'x-user': user }, signal });
const results = async () => (await (await fetch(`${url}/results`)).json()) as string[];
const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
};

describe('shared reads in workerd', () => {
  it('concurrent requests of one isolate share one upstream call', async () => {
    const path = '/api/v1/slow?resourceVersion=0&n=1';
    const first = await get(path, 'alice');
    await until(() => asked.some((a) => a.path === path), 'the upstream call');
    const others = await Promise.all([0, 1, 2, 3].map(() => get(path, 'alice')));
    release!();
    const texts = await Promise.all([first, ...others].map((r) => r.text()));
    for (const t of texts) expect(JSON.parse(t).pad.length).toBe(16 * CHUNK);
    expect(asked.filter((a) => a.path === path).length).toBe(1);
    const r = await results();
    expect(r.filter((x) => x === 'miss').length).toBe(1);
    expect(r.filter((x) => x === 'coalesced').length).toBe(4);
  }, 60_000);

  it('the starting request going away: the others never hang (they finish or fail, to read again alone)', async () => {
    const path = '/api/v1/slow?resourceVersion=0&n=2';
    const leaving = new AbortController();
    const first = await get(path, 'alice', leaving.signal);
    await until(() => asked.some((a) => a.path === path), 'the upstream call');
    const others = await Promise.all([0, 1, 2].map(() => get(path, 'alice')));
    const bodies = Promise.allSettled(others.map((r) => r.text()));
    await first.body!.getReader().read();
    leaving.abort();
    release!();
    const settled = await bodies;
    for (const s of settled) if (s.status === 'fulfilled') expect(s.value.length).toBeGreaterThan(0);
    // a later request is answered whole
    const again = await get(path, 'alice');
    await until(() => asked.filter((a) => a.path === path).length === 2, 'the second upstream call');
    release!();
    expect(JSON.parse(await again.text()).pad.length).toBe(16 * CHUNK);
    await results();
  }, 60_000);

  it('kept answers live in the location Cache API: an isolate with an empty memory answers from it, per identity', async () => {
    const path = '/api/v1/pods?resourceVersion=0';
    const a1 = await (await get(path, 'alice')).json();
    await (await fetch(`${url}/forget-memory`, { method: 'POST' })).text();
    const a2 = await (await get(path, 'alice')).json();
    expect(a2).toEqual(a1);
    expect((await results()).slice(-2)).toEqual(['miss', 'hit']);
    const b = await (await get(path, 'bob')).json();
    expect(b.user).toBe('bob');
    expect(asked.filter((a) => a.path === path).map((a) => a.user)).toEqual(['alice', 'bob']);
    // a consistent read is never kept
    await (await get('/api/v1/pods', 'alice')).text();
    await (await get('/api/v1/pods', 'alice')).text();
    expect(asked.filter((a) => a.path === '/api/v1/pods').length).toBe(2);
  }, 60_000);
});
