/**
 * The floor of a merged list's CPU in a Node process: a stand-in for the fleet that asks every cluster of
 * a fleet config for the same path at once and answers the bytes of the clusters' bodies one after
 * another, without looking at them: no scan, no rewriting, not even valid JSON (the bodies are only
 * concatenated). What it costs per MiB is what reading the upstreams and writing the answer cost, which
 * no merge in this process can go below.
 *
 * How it reads and writes is chosen by FLOOR_CLIENT and FLOOR_WRITE (./floor-ab.ts passes them), so one
 * run can say what each way costs:
 *   FLOOR_CLIENT  request   undici.request over one keep-alive Agent per upstream, its body Readable's
 *                           'data' events (the fleet's upstream client for answers relayed whole); default
 *                 dispatch  undici's Agent#dispatch with a handler of its own: no Readable (the fleet's
 *                           merged-list path, src/platform/node-list.ts, reads so; here without pausing)
 *                 http      node:http request over a keep-alive http.Agent per upstream (Node's native
 *                           llhttp, not undici's wasm one), the IncomingMessage's 'data' events
 *                 socket    a net.Socket per upstream call (kept alive, reused), the request written and
 *                           the framing (Content-Length, chunked) read here: body chunks are views of
 *                           the socket's reads, nothing parsed by anyone else
 *                 none      no upstream: the answer is the bytes the first request read (with `socket`),
 *                           kept in memory; what writing alone costs
 *   FLOOR_WRITE   piece     copied into 256 KiB pieces, each a ServerResponse#write (as the merge writes
 *                           its answer, src/util/bytes.ts ByteSink); default
 *                 pool      copied into 256 KiB pieces as `piece`, each piece taken from a free list and
 *                           given back when the socket has written it (no new zeroed memory per piece)
 *                 unsafe    copied into 256 KiB pieces as `piece`, each new but not zeroed
 *                           (Buffer.allocUnsafe)
 *                 cork      each upstream chunk written as it is (no copy), the response corked until
 *                           256 KiB are in it (one writev)
 *                 direct    each upstream chunk written as it is, no cork of ours (Node corks the chunked
 *                           framing of one write until the next tick itself)
 *                 none      nothing written but the count: what reading alone costs (the answer is
 *                           `{"bytes":N}`, N in the x-floor-bytes header for ./floor-ab.ts's MiB)
 *
 * Every way reads the clusters' bodies at once, as they come (chunks held until the answer reaches
 * them). A watch request (a body that never ends, so the next cluster's would never come) is answered by
 * ./floor-watch.mjs instead: the watch floor, whatever FLOOR_CLIENT and FLOOR_WRITE say.
 */
import { readFileSync } from 'node:fs';
import { createServer, Agent as HttpAgent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { Agent, request } from 'undici';
import { chunkedReader } from './chunked.mjs';
import { isWatchUrl, serveWatch } from './floor-watch.mjs';

// FLOOR_PIECE: the pieces' size in KiB (default 256, the merge's src/list/merge.ts PIECE when written)
const PIECE = (Number(process.env.FLOOR_PIECE) || 256) * 1024;
const CLIENT = process.env.FLOOR_CLIENT || 'request';
const WRITE = process.env.FLOOR_WRITE || 'piece';
if (!['request', 'dispatch', 'http', 'socket', 'none'].includes(CLIENT))
  throw new Error(`FLOOR_CLIENT ${CLIENT}?`);
if (!['piece', 'pool', 'unsafe', 'cork', 'direct', 'none'].includes(WRITE))
  throw new Error(`FLOOR_WRITE ${WRITE}?`);

const at = process.argv.indexOf('--config');
const config = JSON.parse(readFileSync(process.argv[at + 1], 'utf8'));
const clusters = config.members.clusters.map((c) => {
  const server = c.server.replace(/\/$/, '');
  const u = new URL(server);
  return {
    server,
    host: u.hostname,
    port: Number(u.port) || 80,
    token: c.token,
    agent: new Agent({ keepAliveTimeout: 60_000 }),
    httpAgent: new HttpAgent({ keepAlive: true, keepAliveMsecs: 60_000 }),
    idle: [],
  };
});

/** one cluster's body as it arrives: its chunks kept until the answer reaches it */
class Body {
  chunks = [];
  done = false;
  failed = undefined;
  wake = undefined;
  push(c) {
    this.chunks.push(c);
    this.wake?.();
  }
  end() {
    this.done = true;
    this.wake?.();
  }
  fail(e) {
    this.failed ??= e;
    this.wake?.();
  }
  async *[Symbol.asyncIterator]() {
    for (;;) {
      if (this.chunks.length) yield this.chunks.shift();
      else if (this.failed) throw this.failed;
      else if (this.done) return;
      else await new Promise((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}

const headersOf = (c, accept) => ({ accept, authorization: `Bearer ${c.token}` });

function viaRequest(c, path, accept, body) {
  request(`${c.server}${path}`, {
    method: 'GET',
    headers: headersOf(c, accept),
    dispatcher: c.agent,
    bodyTimeout: 0,
  }).then(
    (r) => {
      r.body.on('data', (d) => body.push(d));
      r.body.on('end', () => body.end());
      r.body.on('error', (e) => body.fail(e));
    },
    (e) => body.fail(e),
  );
}

function viaDispatch(c, path, accept, body) {
  c.agent.dispatch(
    { origin: c.server, path, method: 'GET', headers: headersOf(c, accept), bodyTimeout: 0 },
    {
      onConnect() {},
      onHeaders: () => true,
      onData(d) {
        body.push(d);
        return true;
      },
      onComplete: () => body.end(),
      onError: (e) => body.fail(e),
    },
  );
}

function viaHttp(c, path, accept, body) {
  const req = httpRequest({
    host: c.host,
    port: c.port,
    path,
    headers: headersOf(c, accept),
    agent: c.httpAgent,
  });
  req.on('response', (res) => {
    res.on('data', (d) => body.push(d));
    res.on('end', () => body.end());
    res.on('error', (e) => body.fail(e));
  });
  req.on('error', (e) => body.fail(e));
  req.end();
}

const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * One call on a socket of its own (reused when the answer allows): the head read up to its blank line,
 * the body by its Content-Length or its chunks, each chunk of it a view of the socket's read.
 */
function viaSocket(c, path, accept, body) {
  const socket = c.idle.pop() ?? connect({ host: c.host, port: c.port, noDelay: true });
  let head = null; // bytes of the head so far, until it is complete
  let left = -1; // Content-Length bytes left; -1: chunked
  let reuse = true;
  const finish = () => {
    socket.off('data', onData);
    socket.off('error', onError);
    socket.off('close', onClose);
    if (reuse) c.idle.push(socket);
    else socket.destroy();
    body.end();
  };
  const onError = (e) => body.fail(e);
  const onClose = () => body.fail(new Error('upstream closed mid-answer'));
  const chunked = chunkedReader(
    (v) => body.push(v),
    finish,
    (text) => body.fail(new Error(`bad chunk size "${text}"`)),
  );
  const onData = (b) => {
    if (head !== null) {
      const all = head.length ? Buffer.concat([head, b]) : b;
      const end = all.indexOf(CRLF2);
      if (end < 0) {
        head = all;
        return;
      }
      const text = all.latin1Slice(0, end).toLowerCase();
      head = null;
      const cl = /\r\ncontent-length:\s*(\d+)/.exec(text);
      left = cl ? Number(cl[1]) : -1;
      if (/\r\nconnection:\s*close/.test(text)) reuse = false;
      b = all.subarray(end + 4);
      if (left === 0) return finish();
    }
    if (left < 0) return chunked(b);
    if (b.length === 0) return;
    const n = Math.min(left, b.length);
    body.push(n === b.length ? b : b.subarray(0, n));
    left -= n;
    if (left === 0) finish();
  };
  head = Buffer.alloc(0);
  socket.on('data', onData);
  socket.on('error', onError);
  socket.on('close', onClose);
  socket.write(
    `GET ${path} HTTP/1.1\r\nhost: ${c.host}:${c.port}\r\naccept: ${accept}\r\nauthorization: Bearer ${c.token}\r\n\r\n`,
    'latin1',
  );
}

const CLIENTS = { request: viaRequest, dispatch: viaDispatch, http: viaHttp, socket: viaSocket };

/** FLOOR_CLIENT=none: the answers the first request for a path read, by path and Accept */
const remembered = new Map();

function bodiesFor(path, accept) {
  if (CLIENT === 'none') {
    const had = remembered.get(`${accept} ${path}`);
    if (had) {
      const b = new Body();
      for (const c of had) b.chunks.push(c);
      b.done = true;
      return [b];
    }
  }
  const ask = CLIENTS[CLIENT === 'none' ? 'socket' : CLIENT];
  return clusters.map((c) => {
    const b = new Body();
    ask(c, path, accept, b);
    return b;
  });
}

/** FLOOR_WRITE=pool: pieces the socket has written, to be written into again */
const free = [];

const drained = (res) => new Promise((r) => res.once('drain', r));

const server = createServer(async (req, res) => {
  if (isWatchUrl(req.url)) return serveWatch(clusters, req, res);
  const accept = req.headers.accept ?? 'application/json';
  const bodies = bodiesFor(req.url, accept);
  const keep = CLIENT === 'none' && !remembered.has(`${accept} ${req.url}`) ? [] : undefined;
  try {
    if (WRITE === 'none') {
      let total = 0;
      for (const body of bodies) for await (const chunk of body) total += chunk.length;
      const text = `{"bytes":${total}}`;
      res.writeHead(200, { 'content-type': 'application/json', 'x-floor-bytes': String(total) });
      res.end(text);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    if (WRITE === 'piece' || WRITE === 'pool' || WRITE === 'unsafe') {
      const fresh = () =>
        WRITE === 'pool'
          ? (free.pop() ?? new Uint8Array(PIECE + 64 * 1024))
          : WRITE === 'unsafe'
            ? Buffer.allocUnsafe(PIECE + 64 * 1024)
            : new Uint8Array(PIECE + 64 * 1024);
      let buf = fresh();
      let n = 0;
      for (const body of bodies)
        for await (const chunk of body) {
          keep?.push(Buffer.from(chunk));
          if (n + chunk.length > buf.length) {
            const grown = new Uint8Array(n + chunk.length);
            grown.set(buf.subarray(0, n));
            buf = grown;
          }
          buf.set(chunk, n);
          n += chunk.length;
          if (n >= PIECE) {
            const full = buf;
            const back =
              WRITE === 'pool' && full.length === PIECE + 64 * 1024 ? () => free.push(full) : undefined;
            if (!res.write(buf.subarray(0, n), back)) await drained(res);
            buf = fresh();
            n = 0;
          }
        }
      const last = buf;
      res.end(
        buf.subarray(0, n),
        WRITE === 'pool' && last.length === PIECE + 64 * 1024 ? () => free.push(last) : undefined,
      );
    } else {
      const cork = WRITE === 'cork';
      let corked = 0; // bytes written since the cork
      for (const body of bodies)
        for await (const chunk of body) {
          keep?.push(Buffer.from(chunk));
          if (cork && corked === 0) res.cork();
          const ok = res.write(chunk);
          corked += chunk.length;
          if (cork && corked >= PIECE) {
            res.uncork();
            corked = 0;
          }
          if (!ok && !(cork && corked > 0)) await drained(res);
        }
      if (cork && corked > 0) res.uncork();
      res.end();
    }
    if (keep) remembered.set(`${accept} ${req.url}`, keep);
  } catch (e) {
    res.destroy(e);
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const a = server.address();
  console.log(`floor proxy (${CLIENT}, ${WRITE}) listening on http://${a.address}:${a.port}`);
});
