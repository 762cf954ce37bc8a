/**
 * The floor of a merged list's CPU in a Node process: a stand-in for the fleet that asks every cluster of
 * a fleet config for the same path at once, with the fleet's HTTP client (undici.request over one
 * keep-alive Agent per upstream, as src/platform/node.ts), and answers the bytes of the clusters' bodies
 * one after another, copied into 256 KiB pieces as the merge writes its answer (src/util/bytes.ts
 * ByteSink), without looking at them: no scan, no rewriting, not even valid JSON (the bodies are only
 * concatenated). What it costs per MiB is what reading the upstreams and writing the answer cost, which
 * no merge in this process can go below.
 *
 * ./floor-ab.ts runs it beside fleet builds against the same canned upstreams. It answers lists only
 * (a watch's body never ends, so the next cluster's never comes): not a BENCH_BASELINE_BUNDLE for the
 * canned-list case, whose watch burst asks the baseline too.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Agent, request } from 'undici';

const PIECE = 256 * 1024;

const at = process.argv.indexOf('--config');
const config = JSON.parse(readFileSync(process.argv[at + 1], 'utf8'));
const clusters = config.members.clusters.map((c) => ({
  server: c.server.replace(/\/$/, ''),
  token: c.token,
  agent: new Agent({ keepAliveTimeout: 60_000 }),
}));

/** one cluster's body as it arrives: its chunks kept until the answer reaches it */
function ask(c, path, accept) {
  const chunks = [];
  let done = false;
  let wake;
  let failed;
  request(`${c.server}${path}`, {
    method: 'GET',
    headers: { accept, authorization: `Bearer ${c.token}` },
    dispatcher: c.agent,
    bodyTimeout: 0,
  }).then(
    (r) => {
      r.body.on('data', (d) => {
        chunks.push(d);
        wake?.();
      });
      r.body.on('end', () => {
        done = true;
        wake?.();
      });
      r.body.on('error', (e) => {
        failed = e;
        wake?.();
      });
    },
    (e) => {
      failed = e;
      wake?.();
    },
  );
  return async function* () {
    for (;;) {
      if (chunks.length) yield chunks.shift();
      else if (failed) throw failed;
      else if (done) return;
      else await new Promise((r) => (wake = r));
      wake = undefined;
    }
  };
}

const server = createServer(async (req, res) => {
  const accept = req.headers.accept ?? 'application/json';
  const bodies = clusters.map((c) => ask(c, req.url, accept));
  res.writeHead(200, { 'content-type': 'application/json' });
  let buf = new Uint8Array(PIECE + 64 * 1024);
  let n = 0;
  try {
    for (const body of bodies)
      for await (const chunk of body()) {
        if (n + chunk.length > buf.length) {
          const grown = new Uint8Array(n + chunk.length);
          grown.set(buf.subarray(0, n));
          buf = grown;
        }
        buf.set(chunk, n);
        n += chunk.length;
        if (n >= PIECE) {
          if (!res.write(buf.subarray(0, n))) await new Promise((r) => res.once('drain', r));
          buf = new Uint8Array(PIECE + 64 * 1024);
          n = 0;
        }
      }
    res.end(buf.subarray(0, n));
  } catch (e) {
    res.destroy(e);
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const a = server.address();
  console.log(`floor proxy listening on http://${a.address}:${a.port}`);
});
