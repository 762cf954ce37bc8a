/**
 * The real-bed cases' client (bench/lib/real-load.ts) against a local HTTPS server that, like the bed's
 * kube-apiservers and fleets, refuses a caller without a client certificate of its CA: lists counted item
 * by item, GETs timed and their bodies kept, watch streams split into events across chunk boundaries
 * (bookmarks not counted, an ERROR event or an HTTP error reported as a failure, not as events).
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realAnswers, realGets, realWatches, type Tls } from '../../bench/lib/real-load.ts';
import { createTestCA } from '../helpers/tls.ts';

const ITEM = (i: number) => `{"metadata":{"name":"cm-${i}"},"data":{"benchItem":"${i}"}}`;
const ev = (type: string, i: number) => `{"type":"${type}","object":${ITEM(i)}}\n`;

let server: Server;
let base = '';
let tls: Record<string, Tls>;

beforeAll(async () => {
  const ca = createTestCA('bench-real-load-ca');
  const other = createTestCA('bench-real-load-other');
  const serving = ca.server();
  const me = ca.client('bench');
  tls = {
    ok: { ca: ca.cert, ...me },
    stranger: { ca: ca.cert, ...other.client('bench') },
  };
  server = createServer(
    { cert: serving.cert, key: serving.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://x');
      const n = Number(url.searchParams.get('n') ?? '0');
      if (url.pathname === '/list') {
        res.writeHead(200, { 'content-type': 'application/json' });
        // the items in small writes: the counter must find a mark split between two chunks
        const body = `{"kind":"ConfigMapList","items":[${Array.from({ length: n }, (_, i) => ITEM(i)).join(',')}]}`;
        for (let i = 0; i < body.length; i += 7) res.write(body.slice(i, i + 7));
        res.end();
      } else if (url.pathname === '/one') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(ITEM(7));
      } else if (url.pathname === '/watch') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const lines = [ev('BOOKMARK', 0), ...Array.from({ length: n }, (_, i) => ev('MODIFIED', i))].join('');
        // lines cut mid-way, then the stream held open as a watch is
        res.write(lines.slice(0, 50));
        setTimeout(() => res.write(lines.slice(50)), 20);
        if (url.searchParams.get('error'))
          setTimeout(() => res.write('{"type":"ERROR","object":{"code":410,"message":"too old"}}\n'), 40);
      } else {
        res.writeHead(404);
        res.end('no');
      }
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('bench real-bed client', () => {
  it('counts the items of lists read in parallel, and reports a refused certificate as a failure', async () => {
    const out = await realAnswers({
      targets: [
        {
          name: 'two',
          parallel: true,
          steps: [
            { url: `${base}/list?n=40`, as: 'ok' },
            { url: `${base}/list?n=25`, as: 'ok' },
          ],
        },
        { name: 'refused', steps: [{ url: `${base}/list?n=3`, as: 'stranger' }] },
      ],
      tls,
      iterations: 2,
      countPattern: '"benchItem":"',
      cpuPid: process.pid,
    });
    expect(out.two!.map((a) => a.items)).toEqual([65, 65]);
    for (const a of out.two!) {
      expect(a.failed).toBeUndefined();
      expect(a.ms).toBeGreaterThan(0);
      expect(Number.isFinite(a.cpuMs)).toBe(true);
    }
    expect(out.refused!.every((a) => a.failed && a.items === 0)).toBe(true);
  });

  it('times GETs and keeps the first body; an HTTP error counts as failed', async () => {
    const out = await realGets({
      targets: [
        { name: 'one', step: { url: `${base}/one`, as: 'ok' } },
        { name: 'missing', step: { url: `${base}/nope`, as: 'ok' } },
      ],
      tls,
      n: 10,
      concurrency: 2,
      seconds: 0.2,
    });
    expect(out.one!.latencies).toHaveLength(10);
    expect(out.one!.failed).toBe(0);
    expect(out.one!.rps).toBeGreaterThan(0);
    expect(JSON.parse(out.one!.body).metadata.name).toBe('cm-7');
    expect(out.missing!.latencies).toHaveLength(0);
    expect(out.missing!.failed).toBeGreaterThanOrEqual(10);
    expect(out.missing!.firstFailure).toMatch(/HTTP 404/);
  });

  it('counts the events of several streams split across chunks, not bookmarks; an ERROR event fails the watch', async () => {
    const out = await realWatches({
      targets: [
        { name: 'merged', steps: [{ url: `${base}/watch?n=30`, as: 'ok' }] },
        { name: 'three', steps: [10, 10, 10].map((n) => ({ url: `${base}/watch?n=${n}`, as: 'ok' })) },
        { name: 'short', steps: [{ url: `${base}/watch?n=5&error=1`, as: 'ok' }] },
      ],
      tls,
      expect: 30,
      timeoutMs: 10_000,
    });
    for (const n of ['merged', 'three']) {
      expect(out[n]!.failed, n).toBeUndefined();
      expect(out[n]!.received).toBe(30);
      expect(out[n]!.firstMs).toBeGreaterThan(0);
      expect(out[n]!.allMs).toBeGreaterThanOrEqual(out[n]!.firstMs);
    }
    expect(out.three!.byCluster).toEqual({ stream0: 10, stream1: 10, stream2: 10 });
    expect(out.short!.received).toBe(5);
    expect(out.short!.failed).toMatch(/ERROR event: 410 too old/);
  });
});
