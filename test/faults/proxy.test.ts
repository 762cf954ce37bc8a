/**
 * The fault proxy itself, against a tiny local HTTP server and a raw-socket client: each fault does
 * exactly what it says on the wire (bytes sent, how the connection ends), rules pick the right request,
 * and nothing is left open afterwards.
 */
import { Buffer } from 'node:buffer';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { gunzipSync, constants as zc } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestCA } from '../helpers/tls.ts';
import { type FaultProxy, startFaultProxy } from './proxy.ts';

const EVENTS = Array.from({ length: 4 }, (_, i) =>
  JSON.stringify({ type: 'ADDED', object: { kind: 'ConfigMap', metadata: { name: `cm${i}` } } }),
);
const LIST = JSON.stringify({ kind: 'List', items: Array.from({ length: 50 }, (_, i) => ({ n: i })) });

let upstream: http.Server;
let target: string;
const seen: string[] = [];

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.url?.startsWith('/watch')) {
      // one event per write: a chunked NDJSON stream as kube-apiserver sends it
      res.writeHead(200, { 'Content-Type': 'application/json' });
      let i = 0;
      const tick = () => {
        if (i < EVENTS.length) {
          res.write(`${EVENTS[i++]}\n`);
          setTimeout(tick, 5);
        } else res.end();
      };
      tick();
      return;
    }
    if (req.url?.startsWith('/echo')) {
      const parts: Buffer[] = [];
      req.on('data', (d) => parts.push(d));
      req.on('end', () => res.end(Buffer.concat(parts)));
      return;
    }
    if (req.url?.startsWith('/chunked')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(LIST.slice(0, 100));
      res.end(LIST.slice(100));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(LIST) });
    res.end(LIST);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  target = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

let proxy: FaultProxy;
afterEach(async () => {
  await proxy?.close();
});

interface Raw {
  bytes: Buffer;
  ended: 'fin' | 'reset' | 'open';
  head: string;
  body: Buffer;
}

/** one request over a raw socket; `openMs`: how long to wait for an end before calling it open */
function raw(port: number, path: string, extra = '', openMs = 700): Promise<Raw> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    let done = false;
    const finish = (ended: Raw['ended']) => {
      if (done) return;
      done = true;
      clearTimeout(tm);
      s.destroy();
      const bytes = Buffer.concat(parts);
      const i = bytes.indexOf('\r\n\r\n');
      resolve({
        bytes,
        ended,
        head: i < 0 ? bytes.toString() : bytes.subarray(0, i + 4).toString(),
        body: i < 0 ? Buffer.alloc(0) : bytes.subarray(i + 4),
      });
    };
    const tm = setTimeout(() => finish('open'), openMs);
    s.on('data', (d) => parts.push(d));
    s.on('end', () => finish('fin'));
    s.on('error', (e: NodeJS.ErrnoException) => finish(e.code === 'ECONNRESET' ? 'reset' : 'fin'));
    s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n${extra}\r\n`);
  });
}

function dechunk(b: Buffer): { data: Buffer; complete: boolean } {
  const out: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = b.indexOf('\r\n', i);
    if (eol < 0) return { data: Buffer.concat(out), complete: false };
    const n = Number.parseInt(b.subarray(i, eol).toString(), 16);
    if (n === 0) return { data: Buffer.concat(out), complete: true };
    out.push(b.subarray(eol + 2, Math.min(eol + 2 + n, b.length)));
    if (eol + 2 + n + 2 > b.length) return { data: Buffer.concat(out), complete: false };
    i = eol + 2 + n + 2;
  }
}

describe('fault proxy', () => {
  it('forwards untouched when no rule matches, and records every request', async () => {
    proxy = await startFaultProxy(target);
    const r = await raw(proxy.port, '/list?limit=5', 'X-Test: 1\r\n');
    expect(r.ended).toBe('fin');
    expect(r.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.head).toContain('Connection: close');
    expect(r.body.toString()).toBe(LIST);
    expect(proxy.requests).toHaveLength(1);
    expect(proxy.requests[0]).toMatchObject({ method: 'GET', path: '/list', forwarded: true });
    expect(proxy.requests[0]!.query.get('limit')).toBe('5');
    expect(proxy.requests[0]!.headers['x-test']).toBe('1');
  });

  it('forwards request bodies (chunked too)', async () => {
    proxy = await startFaultProxy(target);
    const res = await fetch(`${proxy.url}/echo`, {
      method: 'POST',
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode('{"a":'));
          c.enqueue(new TextEncoder().encode('1}'));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(await res.text()).toBe('{"a":1}');
  });

  it('refuse: closes at once and reaches nothing upstream', async () => {
    proxy = await startFaultProxy(target);
    seen.length = 0;
    proxy.add({ path: '/list', fault: { kind: 'refuse' } });
    const r = await raw(proxy.port, '/list');
    expect(r.bytes.length).toBe(0);
    expect(r.ended).not.toBe('open');
    expect(seen).toEqual([]);
    expect(proxy.requests[0]).toMatchObject({ fault: 'refuse', forwarded: false });
  });

  it('rst: the client sees ECONNRESET, no byte', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ fault: { kind: 'rst' } });
    const r = await raw(proxy.port, '/list');
    expect(r).toMatchObject({ ended: 'reset' });
    expect(r.bytes.length).toBe(0);
  });

  it('status: a kube Status before headers, or a bare code without a body', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ nth: 1, fault: { kind: 'status', code: 410 } });
    proxy.add({ fault: { kind: 'status', code: 431, body: null } });
    const a = await raw(proxy.port, '/list');
    expect(a.head).toMatch(/^HTTP\/1\.1 410 /);
    expect(JSON.parse(a.body.toString())).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    const b = await raw(proxy.port, '/list');
    expect(b.head).toMatch(/^HTTP\/1\.1 431 /);
    expect(b.head).toContain('Content-Length: 0');
    expect(b.body.length).toBe(0);
  });

  it('stall after N header bytes: exactly N bytes, then silence with the socket open', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ fault: { kind: 'stall', phase: 'headers', bytes: 10 } });
    const r = await raw(proxy.port, '/list');
    expect(r.ended).toBe('open');
    expect(r.bytes.toString()).toBe('HTTP/1.1 2');
  });

  it('stall after N body bytes: all headers and N body bytes, then silence', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ fault: { kind: 'stall', phase: 'body', bytes: 30 } });
    const r = await raw(proxy.port, '/list');
    expect(r.ended).toBe('open');
    expect(r.body.toString()).toBe(LIST.slice(0, 30));
    expect(r.head).toContain(`Content-Length: ${LIST.length}`);
  });

  it('cut after N body bytes: N bytes, then a clean FIN (Content-Length framing)', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ fault: { kind: 'cut', phase: 'body', bytes: 30 } });
    const r = await raw(proxy.port, '/list');
    expect(r.ended).toBe('fin');
    expect(r.body.toString()).toBe(LIST.slice(0, 30));
  });

  it('cut counts chunk framing as wire bytes', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ fault: { kind: 'cut', phase: 'body', bytes: 40 } });
    const r = await raw(proxy.port, '/chunked');
    expect(r.head).toContain('Transfer-Encoding: chunked');
    expect(r.body.length).toBe(40);
    expect(r.body.toString().startsWith('64\r\n')).toBe(true); // first chunk: 100 bytes
    expect(dechunk(r.body)).toEqual({ data: Buffer.from(LIST.slice(0, 36)), complete: false });
    expect(r.ended).toBe('fin');
  });

  it('RST after N body bytes', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ fault: { kind: 'rstAfter', phase: 'body', bytes: 5 } });
    const r = await raw(proxy.port, '/list');
    expect(r.ended).toBe('reset');
  });

  it('200-then-EOF: the headers, then FIN before any body byte', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ fault: { kind: 'eofAfterHeaders' } });
    const r = await raw(proxy.port, '/watch?watch=true');
    expect(r.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.body.length).toBe(0);
    expect(r.ended).toBe('fin');
  });

  it('garbage: in the body (valid framing, not JSON) or instead of a response', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ nth: 1, fault: { kind: 'garbage', where: 'body', bytes: 'not json\n' } });
    proxy.add({ fault: { kind: 'garbage', where: 'head', bytes: 'SSH-2.0\r\n' } });
    const a = await raw(proxy.port, '/watch?watch=true');
    expect(a.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(dechunk(a.body).data.toString()).toBe('not json\n');
    expect(a.ended).toBe('fin');
    const b = await raw(proxy.port, '/list');
    expect(b.bytes.toString()).toBe('SSH-2.0\r\n');
  });

  it('slow drip: the whole body arrives, a few bytes per interval', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ fault: { kind: 'drip', bytes: 64, intervalMs: 20 } });
    const t0 = Date.now();
    const r = await raw(proxy.port, '/list', '', 10_000);
    const slices = Math.ceil(LIST.length / 64);
    expect(r.body.toString()).toBe(LIST);
    expect(Date.now() - t0).toBeGreaterThanOrEqual((slices - 1) * 20);
  });

  it('cut a watch after K events: exactly K complete NDJSON lines, then FIN', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ query: { watch: 'true' }, fault: { kind: 'cutAfterEvents', events: 1 } });
    const r = await raw(proxy.port, '/watch?watch=true');
    const { data, complete } = dechunk(r.body);
    expect(complete).toBe(false);
    expect(data.toString()).toBe(`${EVENTS[0]}\n`);
    expect(r.ended).toBe('fin');
  });

  it('a 410 inside a watch, as an ERROR event after K events', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ fault: { kind: 'statusAfterEvents', events: 2, code: 410 } });
    const r = await raw(proxy.port, '/watch?watch=true');
    const lines = dechunk(r.body).data.toString().trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(EVENTS.slice(0, 2));
    expect(JSON.parse(lines[2]!)).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410 } });
    expect(lines).toHaveLength(3);
  });

  it('gzip: compresses per write (each event flushed); cuts count compressed wire bytes', async () => {
    proxy = await startFaultProxy(target, { gzip: true });
    const whole = await raw(proxy.port, '/watch?watch=true', 'Accept-Encoding: gzip\r\n');
    expect(whole.head).toContain('Content-Encoding: gzip');
    const all = dechunk(whole.body);
    expect(all.complete).toBe(true);
    expect(gunzipSync(all.data).toString()).toBe(EVENTS.map((e) => `${e}\n`).join(''));

    proxy.add({ fault: { kind: 'cutAfterEvents', events: 2 } });
    const cut = await raw(proxy.port, '/watch?watch=true', 'Accept-Encoding: gzip\r\n');
    const part = dechunk(cut.body);
    expect(part.complete).toBe(false);
    const text = gunzipSync(part.data, { finishFlush: zc.Z_SYNC_FLUSH }).toString();
    expect(text).toBe(`${EVENTS[0]}\n${EVENTS[1]}\n`);

    proxy.add({ fault: { kind: 'cut', phase: 'body', bytes: 25 } });
    const bytes = await raw(proxy.port, '/list', 'Accept-Encoding: gzip\r\n');
    expect(bytes.body.length).toBe(25);
    expect(bytes.ended).toBe('fin');
  });

  it('rules: match on method, path and query, and apply to the nth matching request only', async () => {
    proxy = await startFaultProxy(target);
    const rule = proxy.add({
      method: 'GET',
      path: /^\/list/,
      query: { limit: true },
      nth: 2,
      fault: { kind: 'rst' },
    });
    expect((await raw(proxy.port, '/list')).ended).toBe('fin'); // no limit: not matched
    expect((await raw(proxy.port, '/list?limit=1')).ended).toBe('fin'); // 1st match: passes
    expect((await raw(proxy.port, '/list?limit=1')).ended).toBe('reset'); // 2nd: the fault
    expect((await raw(proxy.port, '/list?limit=1')).ended).toBe('fin'); // times defaults to 1
    expect(rule).toMatchObject({ matched: 3, applied: 1 });
    expect(proxy.requests.map((r) => r.fault ?? '-')).toEqual(['-', '-', 'rst', '-']);
  });

  it('sever() cuts a watch already under way, and the next request passes', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ fault: { kind: 'stall', phase: 'body', bytes: 1 } });
    const open = raw(proxy.port, '/list', '', 5000);
    const deadline = Date.now() + 5000;
    while (proxy.requests.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    expect(proxy.sever()).toBe(1);
    expect((await open).ended).not.toBe('open');
    const next = await raw(proxy.port, '/list');
    expect(next.body.toString()).toBe(LIST);
  });

  it('close() leaves no socket open, even with stalled and dripping responses', async () => {
    proxy = await startFaultProxy(target);
    proxy.add({ nth: 1, fault: { kind: 'stall', phase: 'body', bytes: 3 } });
    proxy.add({ fault: { kind: 'drip', bytes: 1, intervalMs: 1000 } });
    const s1 = raw(proxy.port, '/list', '', 5000);
    const s2 = raw(proxy.port, '/list', '', 5000);
    const deadline = Date.now() + 5000;
    while (proxy.requests.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(proxy.openSockets()).toBeGreaterThan(0);
    await proxy.close();
    expect(proxy.openSockets()).toBe(0);
    const [a, b] = await Promise.all([s1, s2]);
    expect(a.ended).not.toBe('open');
    expect(b.ended).not.toBe('open');
  });
});

describe('fault proxy in front of an https target with client certificates (a real kube-apiserver)', () => {
  const ca = createTestCA('fault-proxy-ca');
  const serving = ca.server();
  const fleetCert = ca.client('fleet-apiserver', ['fleet']);
  let secure: https.Server;
  let secureUrl: string;

  beforeAll(async () => {
    secure = https.createServer(
      { cert: serving.cert, key: serving.key, ca: ca.cert, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const sock = req.socket as import('node:tls').TLSSocket;
        const cn = sock.authorized ? String(sock.getPeerCertificate().subject?.CN ?? '') : '';
        const body = JSON.stringify({ user: cn || 'system:anonymous', path: req.url, items: LIST });
        res.writeHead(cn ? 200 : 401, { 'Content-Type': 'application/json' });
        res.end(body);
      },
    );
    // an upgrade answered with 101 and then echoed, as exec and port-forward streams are relayed
    secure.on('upgrade', (_req, sock: net.Socket) => {
      sock.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      sock.pipe(sock);
    });
    await new Promise<void>((r) => secure.listen(0, '127.0.0.1', r));
    secureUrl = `https://127.0.0.1:${(secure.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    secure.closeAllConnections();
    return new Promise<void>((r) => secure.close(() => r()));
  });

  it('forwards over TLS with the given client certificate, and its clients speak plain HTTP', async () => {
    proxy = await startFaultProxy(secureUrl, {
      upstreamTls: { ca: ca.cert, cert: fleetCert.cert, key: fleetCert.key },
    });
    const r = await raw(proxy.port, '/api/v1/pods?limit=2');
    expect(r.head).toMatch(/^HTTP\/1\.1 200 /);
    const got = JSON.parse(dechunk(r.body).data.toString() || r.body.toString());
    expect(got).toMatchObject({ user: 'fleet-apiserver', path: '/api/v1/pods?limit=2' });
  });

  it('without a client certificate the target sees an anonymous caller', async () => {
    proxy = await startFaultProxy(secureUrl, { upstreamTls: { ca: ca.cert } });
    expect((await raw(proxy.port, '/api')).head).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('faults act on the plain bytes: a cut after 30 body bytes of a TLS answer', async () => {
    proxy = await startFaultProxy(secureUrl, {
      upstreamTls: { ca: ca.cert, cert: fleetCert.cert, key: fleetCert.key },
    });
    proxy.add({ fault: { kind: 'cut', phase: 'body', bytes: 30 } });
    const r = await raw(proxy.port, '/api/v1/pods');
    expect(r.ended).toBe('fin');
    expect(r.head).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.body.length).toBe(30);
  });

  it('relays upgrades over TLS both ways', async () => {
    proxy = await startFaultProxy(secureUrl, {
      upstreamTls: { ca: ca.cert, cert: fleetCert.cert, key: fleetCert.key },
    });
    const echoed = await new Promise<string>((resolve, reject) => {
      const req = http.request(`${proxy.url}/exec`, { headers: { Connection: 'Upgrade', Upgrade: 'echo' } });
      req.on('upgrade', (_res, sock) => {
        sock.once('data', (d: Buffer) => {
          sock.destroy();
          resolve(d.toString());
        });
        sock.write('ping over tls');
      });
      req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
    expect(echoed).toBe('ping over tls');
  });
});
