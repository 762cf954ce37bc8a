/**
 * The HTTP/2 watch client (./node-watch-h2.ts) against an h2c server of node:http2: what the handler
 * hears (head, data, end), streams sharing a session up to its room, the handler pausing the stream, the
 * abort resetting it, a session going away (its streams fail, the next watch opens another), the headers
 * timeout, and the HTTP/1.1 fallback when the connector says ALPN did not pick h2.
 */
import { once } from 'node:events';
import { connect, createServer, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordingHandler } from '../../test/helpers/watchcall.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { type H2Session, H2Watches, type SessionConnector } from './node-watch-h2.ts';

let server: Http2Server | undefined;
let watches: H2Watches | undefined;
afterEach(() => {
  watches?.close();
  server?.close();
  server = undefined;
});

interface Served {
  origin: string;
  sessions: number;
  streams: ServerHttp2Stream[];
}

/** an h2c server whose every stream runs `onStream` */
async function serve(onStream: (s: ServerHttp2Stream, path: string) => void): Promise<Served> {
  const served: Served = { origin: '', sessions: 0, streams: [] };
  server = createServer();
  server.on('session', () => served.sessions++);
  server.on('stream', (s, headers) => {
    served.streams.push(s);
    s.on('error', () => {});
    onStream(s, String(headers[':path']));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  served.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return served;
}

const h2c: SessionConnector = (origin, _ep, ready) => ready(connect(origin.origin) as unknown as H2Session);

function endpoint(origin: string): ResolvedEndpoint {
  return { name: 'm', server: origin, insecureSkipTLSVerify: false, timeoutMs: 5000, poolKey: origin };
}

function dispatch(
  w: H2Watches,
  origin: string,
  h: object,
  o: { headers?: Record<string, string | string[]>; timeout?: number } = {},
) {
  w.dispatch(
    {
      origin,
      path: '/api/v1/pods?watch=true',
      method: 'GET',
      headers: o.headers ?? {},
      headersTimeout: o.timeout,
    },
    h,
  );
}

const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));
/** waits for what `check` expects (a loaded machine takes its time), not for a fixed time */
const until = (check: () => void) => vi.waitFor(check, { timeout: 10_000, interval: 5 });

describe('H2Watches', () => {
  it('streams share one session; the handler hears the head, the data and the end', async () => {
    const srv = await serve((s) => {
      s.respond({ ':status': 200, 'content-type': 'application/json', 'x-many': ['a', 'b'] });
      s.write('{"type":"ADDED"}\n');
      setTimeout(() => s.end('{"type":"DELETED"}\n'), 10);
    });
    watches = new H2Watches(endpoint(srv.origin), h2c, { dispatch: () => true });
    const a = recordingHandler();
    const b = recordingHandler();
    dispatch(watches, srv.origin, a.h, { headers: { accept: 'application/json', host: 'member1:6443' } });
    dispatch(watches, srv.origin, b.h);
    await Promise.all([a.ended, b.ended]);
    expect(a).toMatchObject({
      status: 200,
      done: 'complete',
      body: '{"type":"ADDED"}\n{"type":"DELETED"}\n',
    });
    expect(a.headers['content-type']).toBe('application/json');
    expect(a.headers['x-many']).toBe('a, b');
    expect(b.done).toBe('complete');
    expect(srv.sessions).toBe(1);
  });

  it('sends :authority from host, repeated values as repeated fields, nothing HTTP/2 has no place for', async () => {
    let got: Record<string, unknown> = {};
    const srv = await serve((s) => s.respond({ ':status': 204 }, { endStream: true }));
    server!.on('stream', (_s, headers) => {
      got = { ...headers };
    });
    watches = new H2Watches(endpoint(srv.origin), h2c, { dispatch: () => true });
    const a = recordingHandler();
    dispatch(watches, srv.origin, a.h, {
      headers: { host: 'member1:6443', connection: 'keep-alive', 'impersonate-group': ['a', 'b'] },
    });
    await a.ended;
    expect(a).toMatchObject({ status: 204, done: 'complete' });
    expect(got[':authority']).toBe('member1:6443');
    expect(got[':path']).toBe('/api/v1/pods?watch=true');
    expect(got.connection).toBeUndefined();
    expect(got.host).toBeUndefined();
    // node:http2 joins repeated fields when it reads them
    expect(got['impersonate-group']).toBe('a, b');
  });

  it("the stream keeps no copy of the headers it sent (node:http2's sentHeaders let go)", async () => {
    const srv = await serve((s) => {
      s.respond({ ':status': 200 });
      s.write('{"type":"ADDED"}\n');
    });
    const sent: Array<{ sentHeaders?: Record<string, unknown> }> = [];
    const recording: SessionConnector = (origin, _ep, ready) => {
      const s = connect(origin.origin);
      const request = s.request.bind(s);
      s.request = ((...args: Parameters<typeof request>) => {
        const st = request(...args);
        sent.push(st);
        return st;
      }) as typeof s.request;
      ready(s as unknown as H2Session);
    };
    watches = new H2Watches(endpoint(srv.origin), recording, { dispatch: () => true });
    const a = recordingHandler();
    let got: Record<string, unknown> = {};
    server!.on('stream', (_s, headers) => {
      got = { ...headers };
    });
    dispatch(watches, srv.origin, a.h, {
      headers: { authorization: 'Bearer secret', 'impersonate-user': 'u' },
    });
    while (!a.body) await tick(5);
    expect(got.authorization).toBe('Bearer secret');
    expect(got[':path']).toBe('/api/v1/pods?watch=true');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.sentHeaders).toBeUndefined();
    a.abort?.(new Error('done'));
    await a.ended;
  });

  it('a session takes at most its room: the next stream opens another session', async () => {
    const srv = await serve((s) => {
      s.respond({ ':status': 200 });
      s.write('x');
    });
    watches = new H2Watches(endpoint(srv.origin), h2c, { dispatch: () => true }, 2);
    const hs = [recordingHandler(), recordingHandler(), recordingHandler()];
    for (const h of hs) dispatch(watches, srv.origin, h.h);
    await until(() => expect(hs.map((h) => h.body)).toEqual(['x', 'x', 'x']));
    expect(srv.sessions).toBe(2);
  });

  it('pauses the stream when the handler asks, and reads on when it resumes', async () => {
    let endSent = false;
    const srv = await serve((s) => {
      s.respond({ ':status': 200 });
      s.write('ab');
      setTimeout(() => {
        s.end('cd');
        endSent = true;
      }, 20);
    });
    watches = new H2Watches(endpoint(srv.origin), h2c, { dispatch: () => true });
    const a = recordingHandler(2);
    dispatch(watches, srv.origin, a.h);
    await until(() => expect(a.body).toBe('ab'));
    await until(() => expect(endSent).toBe(true));
    await tick(50); // 'cd' is on its way: a pause holds it back
    expect(a.body).toBe('ab');
    expect(a.done).toBeUndefined();
    a.resume!();
    await a.ended;
    expect(a).toMatchObject({ body: 'abcd', done: 'complete' });
  });

  it('the abort resets the stream at once; a session that goes away fails its streams, the next opens anew', async () => {
    const srv = await serve((s) => s.respond({ ':status': 200 }));
    watches = new H2Watches(endpoint(srv.origin), h2c, { dispatch: () => true });
    const a = recordingHandler();
    const b = recordingHandler();
    dispatch(watches, srv.origin, a.h);
    dispatch(watches, srv.origin, b.h);
    await until(() => expect([a.status, b.status, srv.streams.length]).toEqual([200, 200, 2]));
    a.abort!(new Error('gone'));
    expect((a.done as Error).message).toBe('gone');
    await until(() => expect(srv.streams[0]!.closed).toBe(true));
    // the server ends the session under b
    srv.streams[1]!.session!.destroy();
    await b.ended;
    expect(b.done).toBeInstanceOf(Error);
    const c = recordingHandler();
    dispatch(watches, srv.origin, c.h);
    await until(() => expect(c.status).toBe(200));
    expect(srv.sessions).toBe(2);
  });

  it('no head within the timeout: the headers timeout error, and the stream is reset', async () => {
    const srv = await serve(() => {});
    watches = new H2Watches(endpoint(srv.origin), h2c, { dispatch: () => true });
    const a = recordingHandler();
    dispatch(watches, srv.origin, a.h, { timeout: 80 });
    await a.ended;
    expect((a.done as Error & { code?: string }).code).toBe('UND_ERR_HEADERS_TIMEOUT');
    await until(() => expect(srv.streams[0]!.closed).toBe(true));
  });

  it('ALPN that did not pick h2: this watch and the next go to the fallback', async () => {
    const sent: object[] = [];
    const noH2: SessionConnector = (_o, _ep, ready) => setTimeout(() => ready(undefined), 5);
    watches = new H2Watches(endpoint('https://m:6443'), noH2, {
      dispatch: (_o: object, h: object) => sent.push(h) > 0,
    });
    const a = recordingHandler();
    const b = recordingHandler();
    dispatch(watches, 'https://m:6443', a.h);
    await until(() => expect(sent).toEqual([a.h]));
    dispatch(watches, 'https://m:6443', b.h);
    expect(sent).toEqual([a.h, b.h]);
  });

  it("a burst waits for the new session's SETTINGS and shares it; a refused h2c port fails its watch", async () => {
    const srv = await serve((s) => {
      s.respond({ ':status': 200 });
      s.write('x');
    });
    watches = new H2Watches(endpoint(srv.origin), h2c, { dispatch: () => true });
    const hs = Array.from({ length: 150 }, () => recordingHandler());
    for (const h of hs) dispatch(watches, srv.origin, h.h);
    await until(() => expect(hs.every((h) => h.body === 'x')).toBe(true));
    expect(srv.sessions).toBe(1);
    // a port nobody listens on (a server opened and closed before anyone connected)
    const gone = createServer();
    gone.listen(0, '127.0.0.1');
    await once(gone, 'listening');
    const port = (gone.address() as AddressInfo).port;
    gone.close();
    await once(gone, 'close');
    const origin = `http://127.0.0.1:${port}`;
    const w2 = new H2Watches(endpoint(origin), h2c, { dispatch: () => true });
    const a = recordingHandler();
    dispatch(w2, origin, a.h);
    await a.ended;
    expect((a.done as Error & { code?: string }).code).toBe('ECONNREFUSED');
    w2.close();
  });

  it('a connection that cannot be made fails the watches waiting for it', async () => {
    const refused: SessionConnector = (_o, _ep, _ready, failed) =>
      setTimeout(() => failed(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })), 5);
    watches = new H2Watches(endpoint('https://m:6443'), refused, { dispatch: () => true });
    const a = recordingHandler();
    dispatch(watches, 'https://m:6443', a.h);
    await a.ended;
    expect((a.done as Error & { code?: string }).code).toBe('ECONNREFUSED');
  });
});
