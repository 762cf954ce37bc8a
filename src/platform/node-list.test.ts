import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { answerReader, type PullReader, pullReader } from '../util/pulled.ts';
import { installNodeHooks, UndiciTransport } from './node.ts';

// a body of many socket reads, chunked (no Content-Length), as kube-apiserver streams a list
const BIG = new Uint8Array(600_000).map((_, i) => 97 + (i % 26));

let server: Server;
let ep: ResolvedEndpoint;
const transport = new UndiciTransport(undefined);
const sockets = new Set<import('node:net').Socket>();

beforeAll(async () => {
  // the Node entry's hooks (a merged list's sources pulled from undici's parser), as startNodeFleet makes them
  installNodeHooks();
  server = createServer((req, res) => {
    if (req.url === '/status') {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end('{"kind":"Status","code":403}');
      return;
    }
    if (req.url === '/cut') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(BIG.subarray(0, 100_000));
      setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(BIG);
  });
  // a loaded machine may leave a pooled connection idle past Node's 5 s default: no reset under the test
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const server_ = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ep = { name: 'c1', server: server_, poolKey: server_, timeoutMs: 10_000 } as ResolvedEndpoint;
});

afterAll(async () => {
  await transport.close();
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

const get = (path: string, signal?: AbortSignal) =>
  transport.send(ep, {
    method: 'GET',
    url: ep.server + path,
    headers: new Headers(),
    body: null,
    timeoutMs: 10_000,
    pulled: true,
    ...(signal ? { signal } : {}),
  });

async function readAll(
  body: ReadableStream<Uint8Array> | PullReader,
): Promise<{ bytes: Uint8Array; reads: number }> {
  const r = body instanceof ReadableStream ? pullReader(body) : body;
  const parts: Uint8Array[] = [];
  let reads = 0;
  for (;;) {
    const x = await r.read();
    if (x.done) break;
    reads++;
    parts.push(x.value.slice());
    // a consumer that waits between reads (the merge writing another cluster's items)
    await new Promise((q) => setTimeout(q, 1));
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return { bytes: out, reads };
}

describe('pulled upstream answers on Node (a merged list’s sources)', () => {
  it('reads a body of many chunks whole, pulling, and the connection serves the next answer', async () => {
    for (let k = 0; k < 2; k++) {
      const res = await get('/big');
      expect(res.status).toBe(200);
      const { bytes, reads } = await readAll(res.body!);
      expect(bytes).toEqual(BIG);
      expect(reads).toBeGreaterThan(1);
    }
  });

  it('holds what the connection read before anyone asked as one chunk, not the body', async () => {
    const res = await get('/big');
    // give the upstream time to send everything: nothing past the chunk the head came in is taken
    await new Promise((q) => setTimeout(q, 100));
    const r = pullReader(res.body!);
    const first = await r.read();
    expect(first.done).toBe(false);
    expect(first.value!.length).toBeLessThan(BIG.length / 2);
    await r.cancel();
    expect((await r.read()).done).toBe(true);
  });

  it('is an ordinary Response read the Web way (a Status read whole)', async () => {
    const res = await get('/status');
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(403);
    expect([res.ok, res.statusText, res.type, res.url, res.redirected, res.bodyUsed]).toEqual([
      false,
      '',
      'default',
      '',
      false,
      false,
    ]);
    // a Response made of it, as a route relaying it would
    const copy = new Response(res.body, res);
    expect(copy.status).toBe(403);
    expect(copy.headers.get('content-type')).toBe(res.headers.get('content-type'));
    expect(await copy.json()).toEqual({ kind: 'Status', code: 403 });
    expect(await (await get('/status')).json()).toEqual({ kind: 'Status', code: 403 });
    const big = await get('/big');
    expect(new Uint8Array(await big.arrayBuffer())).toEqual(BIG);
  });

  it('is read by the call itself when given as an answer, its Web body never made', async () => {
    const res = await get('/big');
    const r = answerReader(res)!;
    // the call is its own reader: not a Web stream's
    expect(r).not.toBeInstanceOf(ReadableStreamDefaultReader);
    expect(res.bodyUsed).toBe(true);
    const { bytes, reads } = await readAll(r);
    expect(bytes).toEqual(BIG);
    expect(reads).toBeGreaterThan(1);
    // an answer whose body was asked for is read through it, as any other
    const again = await get('/big');
    const body = again.body!;
    expect(again.body).toBe(body);
    expect((await readAll(answerReader(again)!)).bytes).toEqual(BIG);
    const copied = (await get('/status')).clone();
    expect(await copied.text()).toBe('{"kind":"Status","code":403}');
  });

  it('fails a read when the body is cut, and ends a waiting read as done when the caller goes away', async () => {
    // the cut may come before undici read the head (a reset drops what the socket held) or after it
    await expect((async () => readAll((await get('/cut')).body!))()).rejects.toThrow();
    const ac = new AbortController();
    const res = await get('/big', ac.signal);
    const r = pullReader(res.body!);
    await r.read();
    ac.abort();
    for (;;) if ((await r.read()).done) break;
  });
});
