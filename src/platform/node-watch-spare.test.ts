/**
 * The spare watch connection (./node-watch-spare.ts) against a TLS server that numbers its connections:
 * the next watch goes out on the spare (its handshake done), a new spare follows, an unused spare is
 * closed after its idle time, a spare the server dropped is never used, one dropped as the request goes
 * out sends it again on a new connection, and nothing is left open or dialled once the transport closes.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestCA } from '../../test/helpers/tls.ts';
import { recordingHandler } from '../../test/helpers/watchcall.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { connectWatch } from './node.ts';
import { H1Watches, type WatchConnector } from './node-watch-h1.ts';
import { SpareWatchSockets, spareCounts } from './node-watch-spare.ts';

const ca = createTestCA();
const pair = ca.server();

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

interface Bed {
  origin: string;
  /** connections the server accepted (TLS done), by number from 1; open: not closed yet */
  conns: Array<{ n: number; open: boolean; sock: TLSSocket }>;
  w: H1Watches;
  spares: SpareWatchSockets;
}

/**
 * Every request is answered with its connection's number (a chunked body, then the end), unless
 * `onRequest` says it handled it.
 */
async function bed(
  idleMs: number,
  onRequest?: (n: number, sock: TLSSocket) => boolean,
  keepMs = 60_000,
): Promise<Bed> {
  const conns: Bed['conns'] = [];
  server = createServer({ key: pair.key, cert: pair.cert }, (sock) => {
    const c = { n: conns.length + 1, open: true, sock };
    conns.push(c);
    sock.on('close', () => {
      c.open = false;
    });
    sock.on('error', () => {});
    let got = '';
    sock.on('data', (b) => {
      got += b.toString('latin1');
      if (!got.includes('\r\n\r\n')) return;
      got = '';
      if (onRequest?.(c.n, sock)) return;
      const body = `conn=${c.n}`;
      sock.end(
        `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ep = {
    name: 'm',
    server: origin,
    caPem: ca.cert,
    insecureSkipTLSVerify: false,
    timeoutMs: 5000,
    poolKey: origin,
  } as ResolvedEndpoint;
  const spares = new SpareWatchSockets(connectWatch as WatchConnector, idleMs, { n: 0, max: 8 }, keepMs);
  return { origin, conns, w: new H1Watches(ep, connectWatch as WatchConnector, spares), spares };
}

/** a watch dispatched to the bed; its body and end */
async function watch(b: Bed) {
  const heard = recordingHandler();
  b.w.dispatch({ origin: b.origin, path: '/api/v1/pods?watch=true', method: 'GET', headers: {} }, heard.h);
  await heard.ended;
  return heard;
}

async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('spare watch connections (node-watch-spare.ts)', () => {
  it('the next watch goes out on the spare, whose handshake is done; a new spare follows it', async () => {
    const b = await bed(60_000);
    const counted = { ...spareCounts };
    expect((await watch(b)).body).toBe('conn=1');
    // a spare is dialled behind the first watch
    await until(() => b.conns.length === 2 && b.spares.size === 1, 'the first spare');
    await until(() => b.spares.ready === 1, 'the spare connected');
    const second = await watch(b);
    expect(second.done).toBe('complete');
    expect(second.body).toBe('conn=2');
    await until(() => b.conns.length === 3 && b.spares.size === 1, 'the spare after it');
    expect((await watch(b)).body).toBe('conn=3');
    // what the real bed's bench row prints as its spare hit rate: one dial, then two ready spares
    expect(spareCounts.none - counted.none).toBe(1);
    expect(spareCounts.ready - counted.ready).toBe(2);
    expect(spareCounts.notReady).toBe(counted.notReady);
    await until(() => b.conns.length === 4, 'the third spare');
    // one spare per host at a time: the watches' own connections are closed, one spare open
    await until(() => b.conns.filter((c) => c.open).length === 1, 'the answered connections closed');
    expect(b.spares.size).toBe(1);
    b.w.close();
    await until(() => b.conns.every((c) => !c.open), 'every connection closed');
  });

  it('a watch that dials one host several times (clusters behind one proxy) leaves as many spares, taken by the next', async () => {
    const b = await bed(60_000);
    const three = () => Promise.all([0, 1, 2].map(() => watch(b))).then((hs) => hs.map((h) => h.body).sort());
    expect(await three()).toEqual(['conn=1', 'conn=2', 'conn=3']);
    await until(() => b.spares.ready === 3 && b.conns.length === 6, 'three spares connected');
    // the next three go out on the spares, no new dial before them
    expect(await three()).toEqual(['conn=4', 'conn=5', 'conn=6']);
    await until(() => b.spares.size === 3 && b.conns.length === 9, 'three spares after them');
    b.w.close();
    await until(() => b.conns.every((c) => !c.open), 'every connection closed');
  });

  it('an expired spare is replaced while its host served a watch lately (watches minutes apart find one)', async () => {
    const b = await bed(800, undefined, 60_000);
    await watch(b);
    await until(() => b.conns.length === 2, 'the spare');
    await until(() => b.conns.length >= 3 && !b.conns[1]!.open, 'the spare expired and replaced');
    await until(() => b.spares.ready === 1, 'its replacement connected');
    // still one spare at a time: the expired ones closed
    await until(() => b.conns.filter((c) => c.open).length === 1, 'only the replacement open');
    const n = b.conns.length;
    expect((await watch(b)).body).toBe(`conn=${n}`);
    b.w.close();
    await until(() => b.conns.every((c) => !c.open), 'every connection closed');
  });

  it('an unused spare is closed after its idle time, and none is dialled until a watch opens again', async () => {
    // no watch lately (keep 0): an expired spare is not replaced
    const b = await bed(300, undefined, 0);
    await watch(b);
    await until(() => b.conns.length === 2, 'the spare');
    await until(() => b.spares.size === 0 && b.conns.every((c) => !c.open), 'the spare closed after 300 ms');
    // nothing dials while no watch opens
    await new Promise((r) => setTimeout(r, 400));
    expect(b.conns.length).toBe(2);
    expect((await watch(b)).body).toBe('conn=3');
    b.w.close();
  });

  it('a spare the server closed while it waited is dropped: the next watch dials anew', async () => {
    const b = await bed(60_000);
    await watch(b);
    await until(() => b.conns.length === 2 && b.spares.size === 1, 'the spare');
    b.conns[1]!.sock.destroy();
    await until(() => b.spares.size === 0, 'the dropped spare forgotten');
    expect((await watch(b)).body).toBe('conn=3');
    b.w.close();
  });

  it('a spare dropped by the server as the request goes out (no byte of an answer): the watch is sent again on a new connection', async () => {
    // the server cuts the spare (connection 2) when the request comes on it
    const b = await bed(60_000, (n, sock) => {
      if (n !== 2) return false;
      sock.destroy();
      return true;
    });
    await watch(b);
    await until(() => b.spares.ready === 1, 'the spare connected');
    const h = await watch(b);
    expect(h.done).toBe('complete');
    expect(h.status).toBe(200);
    // a new connection (the next spare, 3, is dialled behind the take as well)
    expect(h.body).toMatch(/^conn=[34]$/);
    expect(b.conns[1]!.open).toBe(false);
    b.w.close();
  });

  it('the transport closing ends an open watch on a spare and every spare; nothing is dialled after', async () => {
    const b = await bed(60_000, (n) => n === 2);
    await watch(b);
    await until(() => b.spares.size === 1, 'the spare');
    // a watch the server holds open, on the spare
    const heard = recordingHandler();
    b.w.dispatch({ origin: b.origin, path: '/api/v1/pods?watch=true', method: 'GET', headers: {} }, heard.h);
    await until(() => b.conns.length === 3, 'the next spare');
    b.w.close();
    await heard.ended;
    expect(heard.done).toBeInstanceOf(Error);
    expect(b.spares.size).toBe(0);
    await until(() => b.conns.every((c) => !c.open), 'every connection closed');
    await new Promise((r) => setTimeout(r, 200));
    expect(b.conns.length).toBe(3);
  });

  it('spares are bounded across endpoints: none past the budget', async () => {
    const budget = { n: 0, max: 1 };
    const b = await bed(60_000);
    const other = new SpareWatchSockets(connectWatch as WatchConnector, 60_000, budget);
    const mine = new SpareWatchSockets(connectWatch as WatchConnector, 60_000, budget);
    const ep = { name: 'm', server: b.origin, caPem: ca.cert, insecureSkipTLSVerify: false, timeoutMs: 5000 };
    const to = { tls: true, host: '127.0.0.1', port: Number(new URL(b.origin).port), ep } as never;
    other.open(to, { feed: () => {} }).socket.destroy();
    await until(() => other.size === 1, 'the first spare');
    mine.open(to, { feed: () => {} }).socket.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect(mine.size).toBe(0);
    expect(budget.n).toBe(1);
    other.close();
    mine.close();
    expect(budget.n).toBe(0);
  });
});
