/**
 * The floor of a merged watch (issue 33's watch rows), served by ./floor-proxy.mjs for any watch request:
 * the same upstream watches the fleet opens (one per cluster of the config, the same path), read the way
 * the fleet reads them (src/platform/node.ts connectWatch: a plain connection of its own per watch,
 * `connection: close`, no Nagle, reads into one shared buffer through node:net's `onread`, the HTTP/1.1
 * framing read here), and each upstream's bytes written to the client as they arrive, as chunked JSON
 * lines. Nothing else: no scan, no parse, no RV rewrite, no initial-events or bookmark handling.
 *   - 1 cluster: a pure pipe (each read's body bytes copied, the shared buffer is the next read's, and
 *     written);
 *   - more: whole lines interleaved: a read's bytes up to its last line end (lastIndexOf, nothing more)
 *     written with what the cluster left over before, the rest kept for its next read.
 * What it costs per event is what reading the upstreams and writing the client cost in a Node process:
 * a merged watch can go below neither.
 *
 * Resource versions: a per-cluster RV travels as `resourceVersion=<rv1>,<rv2>,…` (one per cluster, in the
 * config's order; the bench lists each cluster for it); a single RV goes to every cluster as it is.
 */
import { connect } from 'node:net';
import { chunkedReader } from './chunked.mjs';

/** every watch connection's reads (one buffer, as the fleet's WATCH_READS): handed on synchronously */
const READS = Buffer.allocUnsafe(64 * 1024);
const CRLF2 = Buffer.from('\r\n\r\n');

/** A watch request, as the fleet tells one (src/platform/node-watch.ts isWatchUrl). */
export function isWatchUrl(url) {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path.includes('/watch/')) return true;
  return q >= 0 && /[?&]watch=(1|t|T|true|TRUE|True)(&|$)/.test(url.slice(q));
}

/** `url` for cluster `i` of `n`: its own RV out of a comma-separated list, if the request gave one. */
export function clusterPath(url, i, n) {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  const rv = params.get('resourceVersion');
  if (!rv?.includes(',')) return url;
  const rvs = rv.split(',');
  if (rvs.length !== n) throw new Error(`${rvs.length} resource versions for ${n} clusters`);
  params.set('resourceVersion', rvs[i]);
  return `${url.slice(0, q)}?${params}`;
}

/**
 * Whole lines of one cluster's body: `take(view)` returns what of it (with what came before) ends with a
 * line end, copied, or undefined; the rest is kept for the next call.
 */
export class Lines {
  rest = undefined;
  take(view) {
    const nl = view.lastIndexOf(10);
    if (nl < 0) {
      this.rest = this.rest ? Buffer.concat([this.rest, view]) : Buffer.from(view);
      return undefined;
    }
    const out = this.rest
      ? Buffer.concat([this.rest, view.subarray(0, nl + 1)])
      : Buffer.from(view.subarray(0, nl + 1));
    this.rest = nl + 1 < view.length ? Buffer.from(view.subarray(nl + 1)) : undefined;
    return out;
  }
}

/**
 * One upstream watch on a connection of its own: `onHead(status)` once its head is in, `onBody(view)` for
 * each piece of body (a view of READS: valid during the call only), `onEnd(err?)` once (ended or failed).
 */
function upstreamWatch(c, path, accept, { onHead, onBody, onEnd }) {
  let head = Buffer.alloc(0); // the head so far; null once read
  let over = false;
  const end = (err) => {
    if (over) return;
    over = true;
    socket.destroy();
    onEnd(err);
  };
  const body = chunkedReader(
    onBody,
    () => end(),
    (text) => end(new Error(`bad chunk size "${text}"`)),
  );
  const feed = (b) => {
    if (over) return;
    if (head !== null) {
      const all = head.length ? Buffer.concat([head, b]) : b;
      const at = all.indexOf(CRLF2);
      if (at < 0) {
        head = Buffer.from(all); // a copy: `b` is the shared buffer's
        return;
      }
      const status = Number(all.latin1Slice(9, 12));
      const chunked = /\r\ntransfer-encoding:\s*chunked/i.test(all.latin1Slice(0, at));
      head = null;
      onHead(status);
      if (over) return;
      if (!chunked) return end(new Error('a watch answer that is not chunked'));
      b = all.subarray(at + 4);
    }
    body(b);
  };
  const socket = connect({
    host: c.host,
    port: c.port,
    onread: {
      buffer: READS,
      callback: (n, buf) => {
        feed(buf.subarray(0, n));
        return true;
      },
    },
  });
  socket.setNoDelay(true);
  socket.setKeepAlive(true, 60_000);
  socket.on('error', (e) => end(e));
  socket.on('close', () => end(new Error('upstream closed')));
  socket.write(
    `GET ${path} HTTP/1.1\r\nhost: ${c.host}:${c.port}\r\naccept: ${accept}\r\nauthorization: Bearer ${c.token}\r\nconnection: close\r\n\r\n`,
    'latin1',
  );
  return socket;
}

/** Answers one watch request: every cluster's watch of the same path, their bytes relayed to `res`. */
export function serveWatch(clusters, req, res) {
  const accept = req.headers.accept ?? 'application/json';
  const n = clusters.length;
  let paths;
  try {
    paths = clusters.map((_, i) => clusterPath(req.url, i, n));
  } catch (e) {
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(String(e.message));
    return;
  }
  const sockets = [];
  let heads = 0;
  /** what came before every head was in (the answer's head waits for all of them) */
  let early = [];
  let done = false;
  let paused = false;
  const finish = (err) => {
    if (done) return;
    done = true;
    for (const s of sockets) s.destroy();
    if (err && !res.headersSent) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(err.message ?? err));
    } else res.end();
  };
  const resume = () => {
    paused = false;
    for (const s of sockets) s.resume();
  };
  const write = (bytes) => {
    if (!res.write(bytes) && !paused) {
      paused = true;
      for (const s of sockets) s.pause();
      res.once('drain', resume);
    }
  };
  res.on('close', () => finish());
  clusters.forEach((c, i) => {
    const lines = n > 1 ? new Lines() : undefined;
    sockets.push(
      upstreamWatch(c, paths[i], accept, {
        onHead(status) {
          if (status !== 200) return finish(new Error(`cluster ${i + 1} answered ${status}`));
          // the answer starts once every cluster's head is in, as the fleet's (src/watch/start.ts)
          if (++heads === n) {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.flushHeaders();
            for (const b of early) write(b);
            early = undefined;
          }
        },
        onBody(view) {
          if (done) return;
          const out = lines ? lines.take(view) : Buffer.from(view);
          if (!out) return;
          if (early) early.push(out);
          else write(out);
        },
        onEnd: finish,
      }),
    );
  });
}
