/**
 * The HTTP/1.1 watch client (./node-watch-h1.ts) against a raw TCP server that writes answers byte by
 * byte as the test says: framing (chunked, Content-Length, up to the close), heads and chunk lines split
 * across reads, 1xx heads, the handler pausing the reads, timeouts, cuts, and what the request says.
 */
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestCA, type KeyPair } from '../../test/helpers/tls.ts';
import { type HeardCall, recordingHandler } from '../../test/helpers/watchcall.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { connectWatch } from './node.ts';
import { H1Watches, type WatchConnector, type WatchSocket } from './node-watch-h1.ts';

/** reads as 'data' events, a buffer each (as node.ts reads a merged list's connections, ./node-list-h1.ts) */
const dataEvents: WatchConnector = ({ host, port }, reader) => {
  const s = connect({ host, port });
  s.on('data', (b) => reader.feed(b));
  return s as unknown as WatchSocket;
};

/** the connector the tests dispatch with: node.ts's (reads into one shared buffer), or dataEvents */
let tcp: WatchConnector = connectWatch as WatchConnector;

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

/** set: the servers speak TLS with this serving pair, and the endpoints trust `ca` */
let pki: (KeyPair & { ca: string }) | undefined;

/** a server whose every connection runs `onConn` with the request head it got */
async function serve(onConn: (sock: Socket, head: string) => void): Promise<string> {
  const accept = (sock: Socket) => {
    let got = '';
    sock.on('data', (b) => {
      if (got.includes('\r\n\r\n')) return;
      got += b.toString('latin1');
      if (got.includes('\r\n\r\n')) onConn(sock, got);
    });
    sock.on('error', () => {});
  };
  server = pki ? createTlsServer({ key: pki.key, cert: pki.cert }, accept) : createServer(accept);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `${pki ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function endpoint(origin: string, timeoutMs = 5000): ResolvedEndpoint {
  const ep = { name: 'm', server: origin, insecureSkipTLSVerify: false, timeoutMs, poolKey: origin };
  return pki ? { ...ep, caPem: pki.ca } : ep;
}

/** dispatches a GET; `pauseAfter`: onData answers false once the body is that long */
function call(
  origin: string,
  o: { headers?: Record<string, string | string[]>; timeout?: number; pauseAfter?: number } = {},
): { heard: HeardCall; end: Promise<HeardCall>; w: H1Watches } {
  const heard = recordingHandler(o.pauseAfter);
  const w = new H1Watches(endpoint(origin), tcp);
  w.dispatch(
    {
      origin,
      path: '/api/v1/pods?watch=true',
      method: 'GET',
      headers: o.headers ?? {},
      headersTimeout: o.timeout,
    },
    heard.h,
  );
  return { heard, end: heard.ended.then(() => heard), w };
}

/** writes `parts` one by one, a tick apart (each its own read on the client, as far as TCP allows) */
async function writeApart(sock: Socket, parts: string[]): Promise<void> {
  for (const p of parts) {
    sock.write(p);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe.each([
  ['node.ts, plain TCP (one read buffer for every connection)', connectWatch as WatchConnector],
  ['reads as data events (a buffer each)', dataEvents],
])('H1Watches, %s', (_, connector) => {
  beforeEach(() => {
    tcp = connector;
  });

  it('reads a chunked body whose head and chunk lines are split across reads', async () => {
    const origin = await serve((sock) => {
      void writeApart(sock, [
        'HTTP/1.1 200 OK\r\nContent-Ty',
        'pe: application/json\r\nTransfer-Encoding: chunked\r',
        '\n\r\n5\r\nhel',
        'lo\r',
        '\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n',
        '\r\n',
      ]);
    });
    const { end } = call(origin);
    const h = await end;
    expect(h.status).toBe(200);
    expect(h.headers['content-type']).toBe('application/json');
    expect(h.body).toBe('hello world');
    expect(h.done).toBe('complete');
  });

  it('reads every chunk-size form alike, whole in a read or split anywhere: hex of either case, leading zeros, extensions (property)', async () => {
    const chunk = fc.record({
      data: fc.string({ minLength: 1, maxLength: 40 }).map((s) => s.replace(/[^\x20-\x7e]/g, 'x')),
      upper: fc.boolean(),
      zeros: fc.integer({ min: 0, max: 3 }),
      ext: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(chunk, { minLength: 1, maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 1000 }), { maxLength: 5 }),
        async (chunks, cuts) => {
          let wire = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
          for (const c of chunks) {
            const hex = c.data.length.toString(16);
            wire += `${'0'.repeat(c.zeros)}${c.upper ? hex.toUpperCase() : hex}${c.ext ? ';a=b' : ''}\r\n${c.data}\r\n`;
          }
          wire += '0\r\n\r\n';
          const parts: string[] = [];
          let from = 0;
          for (const x of [...new Set(cuts.map((k) => k % wire.length))].sort((a, b) => a - b))
            if (x > from) {
              parts.push(wire.slice(from, x));
              from = x;
            }
          parts.push(wire.slice(from));
          server?.close();
          const origin = await serve((sock) => void writeApart(sock, parts));
          const h = await call(origin).end;
          expect(h.body).toBe(chunks.map((c) => c.data).join(''));
          expect(h.done).toBe('complete');
        },
      ),
      { numRuns: 25 },
    );
  });

  it('reads a Content-Length body, and the body up to the close when there is no framing', async () => {
    const a = await serve((sock) => {
      sock.write('HTTP/1.1 410 Gone\r\nContent-Length: 7\r\n\r\n{"a":1}');
    });
    expect(await call(a).end).toMatchObject({ status: 410, body: '{"a":1}', done: 'complete' });
    server?.close();
    const b = await serve((sock) => {
      sock.end('HTTP/1.0 200 OK\r\n\r\nline1\nline2\n');
    });
    expect(await call(b).end).toMatchObject({ status: 200, body: 'line1\nline2\n', done: 'complete' });
  });

  it('skips informational heads and ends a bodyless answer at once', async () => {
    const origin = await serve((sock) => {
      // the connection stays open: the 204 ends the call, not the close
      sock.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nX-A: b\r\n\r\n');
    });
    expect(await call(origin).end).toMatchObject({ status: 204, headers: { 'x-a': 'b' }, body: '' });
  });

  it('a cut mid-body (and an unframed head) is an error, not the end', async () => {
    const origin = await serve((sock) => {
      sock.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n');
    });
    const h = await call(origin).end;
    expect(h.body).toBe('abc');
    expect((h.done as Error & { code?: string }).code).toBe('UND_ERR_SOCKET');
  });

  it('garbage for a chunk size or a status line is an error', async () => {
    const a = await serve((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    });
    expect((await call(a).end).done).toBeInstanceOf(Error);
    server?.close();
    // more than 12 hex digits, whole in one read
    const c = await serve((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0000000000005\r\nhello\r\n0\r\n\r\n');
    });
    expect((await call(c).end).done).toBeInstanceOf(Error);
    server?.close();
    const b = await serve((sock) => {
      sock.write('SSH-2.0-OpenSSH\r\n\r\n');
    });
    expect((await call(b).end).done).toBeInstanceOf(Error);
  });

  it('no head within the timeout: the headers timeout error', async () => {
    const origin = await serve(() => {});
    const h = await call(origin, { timeout: 100 }).end;
    expect((h.done as Error & { code?: string }).code).toBe('UND_ERR_HEADERS_TIMEOUT');
  });

  it('sends the head as given: host, connection: close, one line per array value; refuses a CR/LF', async () => {
    let head = '';
    const origin = await serve((sock, got) => {
      head = got;
      sock.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    });
    await call(origin, { headers: { accept: 'application/json', 'impersonate-group': ['a', 'b'] } }).end;
    const host = new URL(origin).host;
    expect(head).toBe(
      `GET /api/v1/pods?watch=true HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n` +
        'accept: application/json\r\nimpersonate-group: a\r\nimpersonate-group: b\r\n\r\n',
    );
    const bad = await call(origin, { headers: { 'x-a': 'b\r\nx-evil: 1' } }).end;
    expect(bad.done).toBeInstanceOf(Error);
  });

  it('pauses the socket when the handler asks, and delivers the rest of the read on resume', async () => {
    const origin = await serve((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n2\r\ncd\r\n2\r\nef\r\n');
    });
    const { heard } = call(origin, { pauseAfter: 2 });
    await new Promise((r) => setTimeout(r, 100));
    expect(heard.body).toBe('ab');
    expect(heard.done).toBeUndefined();
    heard.resume!();
    // the handler pauses again after each chunk (it stays past its mark): one chunk per resume
    expect(heard.body).toBe('abcd');
    heard.resume!();
    expect(heard.body).toBe('abcdef');
    heard.abort!(new Error('bye'));
    expect((heard.done as Error).message).toBe('bye');
  });

  it('a pause keeps the rest of its read while other connections read on', async () => {
    let n = 0;
    const origin = await serve((sock) => {
      const x = n++ === 0 ? 'a' : 'z';
      sock.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n${x}${x}\r\n2\r\n${x}${x}\r\n`);
    });
    const first = call(origin, { pauseAfter: 2 }).heard;
    await new Promise((r) => setTimeout(r, 100));
    expect(first.body).toBe('aa');
    // another connection's reads go where the first one's did (node.ts's shared buffer)
    const second = call(origin).heard;
    await new Promise((r) => setTimeout(r, 100));
    expect(second.body).toBe('zzzz');
    first.resume!();
    expect(first.body).toBe('aaaa');
    first.abort!(new Error('bye'));
    second.abort!(new Error('bye'));
  });

  it('a connection that ends while a pause holds bytes back ends after them, on resume', async () => {
    const origin = await serve((sock) => {
      sock.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n5\r\nbcdef\r\n0\r\n\r\n');
    });
    const { heard, end } = call(origin, { pauseAfter: 1 });
    await new Promise((r) => setTimeout(r, 100));
    expect(heard.done).toBeUndefined();
    // the handler pauses after every chunk: a resume each
    for (let i = 0; i < 5 && !heard.done; i++) {
      heard.resume!();
      await new Promise((r) => setTimeout(r, 20));
    }
    const h = await end;
    expect(h).toMatchObject({ body: 'abcdef', done: 'complete' });
  });

  it('a connection cut while a pause holds bytes back fails after them, on resume', async () => {
    const origin = await serve((sock) => {
      sock.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n5\r\nbcdef\r\n');
    });
    const { heard, end } = call(origin, { pauseAfter: 1 });
    await new Promise((r) => setTimeout(r, 100));
    expect(heard.body).toBe('a');
    expect(heard.done).toBeUndefined();
    // the handler pauses after every chunk: a resume each
    for (let i = 0; i < 5 && !heard.done; i++) {
      heard.resume!();
      await new Promise((r) => setTimeout(r, 20));
    }
    const h = await end;
    expect(h.body).toBe('abcdef');
    expect((h.done as Error & { code?: string }).code).toBe('UND_ERR_SOCKET');
  });

  it('a 101 is a head and nothing after it; a head over 64 KiB is refused', async () => {
    const a = await serve((sock) => {
      sock.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\nbytes');
    });
    expect(await call(a).end).toMatchObject({ status: 101, body: '', done: 'complete' });
    server?.close();
    const b = await serve((sock) => {
      // a head that goes on past 64 KiB, its end not yet in sight
      sock.write(`HTTP/1.1 200 OK\r\nX-Big: ${'x'.repeat(70_000)}`);
    });
    expect(((await call(b).end).done as Error & { code?: string }).code).toBe('UND_ERR_HEADERS_OVERFLOW');
    server?.close();
    const c = await serve((sock) => {
      // the same head, whole, its blank line in the same write
      sock.write(`HTTP/1.1 200 OK\r\nX-Big: ${'x'.repeat(70_000)}\r\nContent-Length: 0\r\n\r\n`);
    });
    const whole = await call(c).end;
    expect((whole.done as Error & { code?: string }).code).toBe('UND_ERR_HEADERS_OVERFLOW');
    expect(whole.status).toBeUndefined();
  });

  it('the abort ends the call at once, and the transport closing ends every open call', async () => {
    const origin = await serve((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
    });
    const a = call(origin);
    const b = call(origin);
    // both heads in (a fixed 50 ms was too short on a loaded machine)
    for (let i = 0; i < 200 && (a.heard.status === undefined || b.heard.status === undefined); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(a.heard.status).toBe(200);
    a.heard.abort!(new Error('gone'));
    expect((a.heard.done as Error).message).toBe('gone');
    b.w.close();
    expect((b.heard.done as Error & { code?: string }).code).toBe('UND_ERR_DESTROYED');
  });

  it('an unreachable port is an error', async () => {
    const origin = await serve(() => {});
    server!.close();
    await once(server!, 'close');
    const h = await call(origin).end;
    expect((h.done as Error & { code?: string }).code).toBe('ECONNREFUSED');
  });
});

describe("H1Watches over TLS, node.ts's connector (its reads into the shared buffer too)", () => {
  beforeAll(() => {
    const ca = createTestCA('h1-watch-test');
    pki = { ...ca.server(), ca: ca.cert };
  });
  beforeEach(() => {
    tcp = connectWatch as WatchConnector;
  });
  afterAll(() => {
    pki = undefined;
  });

  it('reads a chunked body whose chunk lines are split across reads', async () => {
    const origin = await serve((sock) => {
      void writeApart(sock, [
        'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r',
        '\nhello\r\n',
        '0\r\n\r\n',
      ]);
    });
    expect(await call(origin).end).toMatchObject({ status: 200, body: 'hello', done: 'complete' });
  });

  it('a pause keeps what TLS hands over after it: a burst of records in one read loses no byte', async () => {
    // one write of 256 KiB: many 16 KiB TLS records, several decrypted out of each TCP read, which the
    // socket hands over to its onread buffer even once paused (the bed's lost watch events, issue 30)
    const body = Array.from({ length: 4096 }, (_, i) => `${String(i).padStart(63, '0')}\n`).join('');
    const origin = await serve((sock) => {
      sock.end(
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      );
    });
    const first = call(origin, { pauseAfter: 1 });
    for (let i = 0; i < 1000 && !first.heard.done; i++) {
      await new Promise((r) => setTimeout(r, 5));
      first.heard.resume?.();
    }
    const heard = await first.end;
    expect(heard.done).toBe('complete');
    expect(heard.body.length).toBe(body.length);
    expect(heard.body === body).toBe(true);
  });

  it('a pause keeps the rest of its read while other connections read on, and ends after it', async () => {
    let n = 0;
    const origin = await serve((sock) => {
      const x = n++ === 0 ? 'a' : 'z';
      sock.end(
        `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n${x}${x}\r\n2\r\n${x}${x}\r\n0\r\n\r\n`,
      );
    });
    const first = call(origin, { pauseAfter: 2 });
    await new Promise((r) => setTimeout(r, 150));
    expect(first.heard.body).toBe('aa');
    const second = await call(origin).end;
    expect(second).toMatchObject({ body: 'zzzz', done: 'complete' });
    for (let i = 0; i < 5 && !first.heard.done; i++) {
      first.heard.resume!();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await first.end).toMatchObject({ body: 'aaaa', done: 'complete' });
  });
});
