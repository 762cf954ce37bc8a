/**
 * A merged list's pulled answers over HTTP/1.1 (./node-list-h1.ts) against a raw TCP server that answers
 * each request as the test says: which connections are kept for the next call and which are not, and a
 * kept connection the server closed as the next request went out (sent again on a new one). The framing
 * itself is ./node-h1-call.ts's, tested through the watches (node-watch-h1.test.ts).
 */
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type HeardCall, recordingHandler } from '../../test/helpers/watchcall.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { connectWatch } from './node.ts';
import type { ListConnector, WatchSocket } from './node-h1-call.ts';
import { H1Lists } from './node-list-h1.ts';
import { H1Watches } from './node-watch-h1.ts';

let server: Server | undefined;
let pool: H1Lists | undefined;
afterEach(() => {
  pool?.close();
  pool = undefined;
  server?.close();
  server = undefined;
});

/** what the server saw: its connections (in order), and each request's head with its connection's index */
interface Seen {
  conns: Socket[];
  heads: Array<{ conn: number; head: string }>;
}

/** a server answering the n-th request (counted over all connections) with `answer(n, sock)` */
async function serve(answer: (n: number, sock: Socket) => void): Promise<{ origin: string; seen: Seen }> {
  const seen: Seen = { conns: [], heads: [] };
  server = createServer((sock) => {
    const conn = seen.conns.push(sock) - 1;
    let got = '';
    sock.on('data', (b) => {
      got += b.toString('latin1');
      for (let at = got.indexOf('\r\n\r\n'); at >= 0; at = got.indexOf('\r\n\r\n')) {
        seen.heads.push({ conn, head: got.slice(0, at) });
        got = got.slice(at + 4);
        answer(seen.heads.length - 1, sock);
      }
    });
    sock.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const tcp = ({ host, port }: { host: string; port: number }) =>
  connect({ host, port }) as unknown as WatchSocket;

function endpoint(origin: string): ResolvedEndpoint {
  return { name: 'm', server: origin, insecureSkipTLSVerify: false, timeoutMs: 5000, poolKey: origin };
}

function lists(origin: string, connect: ListConnector = tcp): H1Lists {
  pool = new H1Lists(endpoint(origin), connect);
  return pool;
}

/** one GET through the pool, to its end */
function get(p: H1Lists, origin: string, pauseAfter?: number): Promise<HeardCall> {
  const heard = recordingHandler(pauseAfter);
  p.dispatch(
    { origin, path: '/api/v1/pods', method: 'GET', headers: { accept: 'application/json' } },
    heard.h,
  );
  return heard.ended.then(() => heard);
}

const sized = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`;
const chunked = (body: string) =>
  `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;

describe('H1Lists', () => {
  it('sends the next call on the connection the last answer left (Content-Length and chunked), without connection: close', async () => {
    const { origin, seen } = await serve((n, sock) =>
      sock.write(n % 2 ? chunked(`{"n":${n}}`) : sized(`{"n":${n}}`)),
    );
    const p = lists(origin);
    for (let n = 0; n < 4; n++)
      expect(await get(p, origin)).toMatchObject({ status: 200, body: `{"n":${n}}`, done: 'complete' });
    expect(seen.conns.length).toBe(1);
    expect(seen.heads.map((h) => h.conn)).toEqual([0, 0, 0, 0]);
    expect(seen.heads[0]!.head).not.toMatch(/connection:/i);
    expect(seen.heads[0]!.head).toMatch(
      /^GET \/api\/v1\/pods HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\naccept: application\/json$/,
    );
  });

  it('keeps a connection a paused reader left paused at the end of its answer', async () => {
    const body = 'x'.repeat(200_000);
    const { origin, seen } = await serve((_n, sock) => sock.write(sized(body)));
    const p = lists(origin);
    const heard = recordingHandler(1);
    p.dispatch({ origin, path: '/', method: 'GET', headers: {} }, heard.h);
    // the reader asks for more each time the handler paused, until the end
    const timer = setInterval(() => heard.resume?.(), 2);
    await heard.ended;
    clearInterval(timer);
    expect(heard.body.length).toBe(body.length);
    expect((await get(p, origin)).body.length).toBe(body.length);
    expect(seen.conns.length).toBe(1);
  });

  it('opens a new connection after an answer that says Connection: close, one that is not HTTP/1.1, or one read up to its close', async () => {
    const answers = [
      sized('{}', 'Connection: close\r\n'),
      'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}',
      'HTTP/1.1 200 OK\r\n\r\n{}',
      sized('{}'),
    ];
    const { origin, seen } = await serve((n, sock) => {
      sock.write(answers[n]!);
      if (n === 2) sock.end();
    });
    const p = lists(origin);
    for (let n = 0; n < 4; n++) expect(await get(p, origin)).toMatchObject({ body: '{}', done: 'complete' });
    expect(seen.heads.map((h) => h.conn)).toEqual([0, 1, 2, 3]);
  });

  it('closes the connection of a call that failed (a cut mid-body) or was aborted, and of an answer with bytes after it', async () => {
    const { origin, seen } = await serve((n, sock) => {
      if (n === 0) sock.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{"a"');
      else if (n === 1) sock.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{"a"');
      else if (n === 2) sock.write(`${sized('{}')}junk`);
      else sock.write(sized('{}'));
    });
    const p = lists(origin);
    const cut = await get(p, origin);
    expect((cut.done as Error & { code?: string }).code).toBe('UND_ERR_SOCKET');
    const heard = recordingHandler();
    p.dispatch({ origin, path: '/', method: 'GET', headers: {} }, heard.h);
    await new Promise((r) => setTimeout(r, 50));
    heard.abort?.(new Error('client left'));
    await heard.ended;
    expect((heard.done as Error).message).toBe('client left');
    expect(await get(p, origin)).toMatchObject({ body: '{}', done: 'complete' });
    expect(await get(p, origin)).toMatchObject({ body: '{}', done: 'complete' });
    expect(seen.heads.map((h) => h.conn)).toEqual([0, 1, 2, 3]);
  });

  it('drops a kept connection the server closes while it waits, and sends again on a new one a request a kept connection was closed under', async () => {
    const { origin, seen } = await serve((n, sock) => {
      if (n === 2) sock.destroy();
      else sock.write(sized(`{"n":${n}}`));
      // the first connection is closed by the server once idle
      if (n === 0) setTimeout(() => sock.end(), 20);
    });
    const p = lists(origin);
    expect((await get(p, origin)).body).toBe('{"n":0}');
    await new Promise((r) => setTimeout(r, 100));
    expect((await get(p, origin)).body).toBe('{"n":1}');
    // request 2 is closed without a byte of answer on the kept connection: request 3 is the same, sent again
    expect(await get(p, origin)).toMatchObject({ body: '{"n":3}', done: 'complete' });
    expect(seen.heads.map((h) => h.conn)).toEqual([0, 1, 1, 2]);
  });

  it('reads call after call on a kept connection with the listeners it put on once, and closes it when the idle time its answer gave is up', async () => {
    const { origin, seen } = await serve((n, sock) =>
      sock.write(sized(`{"n":${n}}`, 'Keep-Alive: timeout=2\r\n')),
    );
    const opened: Socket[] = [];
    const p = lists(origin, (to) => {
      const s = connect({ host: to.host, port: to.port });
      opened.push(s);
      return s as unknown as WatchSocket;
    });
    expect((await get(p, origin)).body).toBe('{"n":0}');
    const counts = () => ['data', 'end', 'error', 'close'].map((e) => opened[0]!.listenerCount(e));
    const after1 = counts();
    for (let n = 1; n < 4; n++) expect((await get(p, origin)).body).toBe(`{"n":${n}}`);
    expect(opened.length).toBe(1);
    expect(counts()).toEqual(after1);
    // timeout=2: kept a second, then closed by the fleet (the server sees the close) and not asked again
    await once(seen.conns[0]!, 'close');
    expect(opened[0]!.destroyed).toBe(true);
    expect((await get(p, origin)).body).toBe('{"n":4}');
    expect(seen.heads.map((h) => h.conn)).toEqual([0, 0, 0, 0, 1]);
  });

  it('keeps no more connections than the process-wide budget, whichever endpoint they are to', async () => {
    const { origin, seen } = await serve((n, sock) => sock.write(sized(`{"n":${n}}`)));
    const budget = { kept: 0, max: 1 };
    const a = new H1Lists(endpoint(origin), tcp, budget);
    const b = new H1Lists(endpoint(origin), tcp, budget);
    pool = a;
    try {
      expect((await get(a, origin)).body).toBe('{"n":0}');
      expect(budget.kept).toBe(1);
      // the budget is spent: b's connection is closed after its answer, so its next call opens another
      expect((await get(b, origin)).body).toBe('{"n":1}');
      await once(seen.conns[1]!, 'close');
      expect(budget.kept).toBe(1);
      expect((await get(b, origin)).body).toBe('{"n":2}');
      // a takes its kept connection (the budget frees), and keeps it again after
      expect((await get(a, origin)).body).toBe('{"n":3}');
      expect(seen.heads.map((h) => h.conn)).toEqual([0, 1, 2, 0]);
      expect(budget.kept).toBe(1);
      a.close();
      expect(budget.kept).toBe(0);
    } finally {
      b.close();
    }
  });

  it('fails a new connection that closes before its answer (only a kept one is asked again)', async () => {
    const { origin, seen } = await serve((_n, sock) => sock.destroy());
    const h = await get(lists(origin), origin);
    expect((h.done as Error & { code?: string }).code).toBe('UND_ERR_SOCKET');
    expect(seen.heads.length).toBe(1);
  });

  it('ends its kept connections when closed, and refuses calls after', async () => {
    const { origin, seen } = await serve((_n, sock) => sock.write(sized('{}')));
    const p = lists(origin);
    await get(p, origin);
    const closed = once(seen.conns[0]!, 'close');
    p.close();
    await closed;
    // and sends nothing more
    const after = await get(p, origin);
    expect((after.done as Error & { code?: string }).code).toBe('UND_ERR_DESTROYED');
    expect(seen.conns.length).toBe(1);
  });

  it("keeps the chunks its handler holds as they were read while a watch reads into node.ts's shared buffer", async () => {
    const list = 'a'.repeat(2000);
    const { origin } = await serve((n, sock) =>
      sock.write(n === 0 ? sized(list) : chunked('z'.repeat(2000))),
    );
    const p = lists(origin, connectWatch);
    // a merge holds a list's chunks past the read (node-list.ts's read-ahead): so does this handler
    const held: Uint8Array[] = [];
    const listed = recordingHandler();
    const onData = (c: Uint8Array) => held.push(c) > 0;
    p.dispatch({ origin, path: '/', method: 'GET', headers: {} }, { ...listed.h, onData });
    await listed.ended;
    const watched = recordingHandler();
    new H1Watches(endpoint(origin), connectWatch).dispatch(
      { origin, path: '/?watch=1', method: 'GET', headers: {} },
      watched.h,
    );
    await watched.ended;
    expect(watched.body).toBe('z'.repeat(2000));
    expect(Buffer.concat(held).toString()).toBe(list);
  });
});
