/**
 * The passthrough request's JavaScript alone, in one process: the real Node entry (startNodeFleet: the
 * @hono/node-server adapter, every filter, the route, the upstream client, the direct relay and its
 * writer) fed requests without sockets (an IncomingMessage on a stand-in socket, emitted as the server's
 * `request`), whose upstream dispatch answers at once with a kube-like ConfigMap. What is left out is
 * what a bare node:http + undici proxy pays too (parsers, syscalls), so the CPU per request here is the
 * fleet's own cost, measurable to a microsecond on a busy machine.
 *
 *   node --import tsx bench/lib/passthrough-chain.ts [requests=20000] [rounds=5]
 */
import { EventEmitter } from 'node:events';
import { IncomingMessage } from 'node:http';
import { startNodeFleet } from '../../deploy/node/server.ts';
import { parseConfig } from '../../src/config/schema.ts';
import { UndiciTransport } from '../../src/platform/node.ts';

const BODY = Buffer.from(
  JSON.stringify({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: {
      name: 'small',
      namespace: 'bench',
      uid: '5b0c6a1e-0000-4000-8000-000000000001',
      resourceVersion: '1042',
    },
    data: { 'app.properties': 'color=blue\nmode=fast\n', greeting: 'hello' },
  }),
);
const HEAD = [
  'Audit-Id',
  '1a7e0c2d-5b6f-4d3e-9a8b-7c6d5e4f3a2b',
  'Cache-Control',
  'no-cache, private',
  'Content-Type',
  'application/json',
  'X-Kubernetes-Pf-Flowschema-Uid',
  'f0e1d2c3-b4a5-4697-8879-6a5b4c3d2e1f',
  'X-Kubernetes-Pf-Prioritylevel-Uid',
  '0f1e2d3c-4b5a-4967-8897-a6b5c4d3e2f1',
  'Date',
  'Wed, 02 Dec 2026 06:00:00 GMT',
  'Content-Length',
  String(BODY.length),
].map((s) => Buffer.from(s, 'latin1'));

// the upstream: every dispatch answered in the next microtask
(UndiciTransport.prototype as unknown as { dispatcherFor: unknown }).dispatcherFor = () => ({
  dispatch(
    _opts: unknown,
    h: {
      onConnect(a: () => void): void;
      onHeaders(s: number, r: Buffer[], res: () => void): boolean;
      onData(b: Buffer): boolean;
      onComplete(t: unknown[]): void;
    },
  ) {
    queueMicrotask(() => {
      h.onConnect(() => {});
      h.onHeaders(200, HEAD, () => {});
      h.onData(BODY);
      h.onComplete([]);
    });
    return true;
  },
});

const requests = Number(process.argv[2] ?? 20000);
const rounds = Number(process.argv[3] ?? 5);
const fleet = await startNodeFleet({
  config: parseConfig({
    controlPlane: { server: 'http://127.0.0.1:9', token: 't' },
    authentication: { anonymous: { enabled: true } },
    members: { mode: 'static', clusters: [{ name: 'member1', server: 'http://127.0.0.1:9', token: 't' }] },
  }),
});

class Sock extends EventEmitter {
  destroyed = false;
  encrypted = undefined;
  remoteAddress = '127.0.0.1';
  writable = true;
}
const socket = new Sock();
const PATH = '/clusterspaces/member1/api/v1/namespaces/bench/configmaps/small';
const RAW = [
  'Host',
  '127.0.0.1:8080',
  'User-Agent',
  'kubectl/v1.31.0 (linux/amd64) kubernetes/abcdef',
  'Accept',
  'application/json',
  'Accept-Encoding',
  'gzip',
];

let written = 0;
let bad = 0;
function one(): Promise<void> {
  const inc = new IncomingMessage(socket as never);
  inc.method = 'GET';
  inc.url = PATH;
  inc.httpVersion = '1.1';
  inc.httpVersionMajor = 1;
  inc.httpVersionMinor = 1;
  (inc as unknown as { _addHeaderLines(h: string[], n: number): void })._addHeaderLines(
    RAW.slice(),
    RAW.length,
  );
  inc.push(null);
  inc.complete = true;
  return new Promise((done) => {
    const out = Object.assign(new EventEmitter(), {
      req: inc,
      socket,
      writableFinished: false,
      headersSent: false,
      destroyed: false,
      setHeader() {},
      writeHead(status: number) {
        if (status !== 200) bad = status;
        this.headersSent = true;
        return this;
      },
      write(c: Buffer) {
        if (bad) console.log(String(c));
        return true;
      },
      end(chunk?: Buffer) {
        if (chunk) written += chunk.length;
        if (bad) throw new Error(`status ${bad}: ${chunk}`);
        this.writableFinished = true;
        (this as unknown as EventEmitter).emit('finish');
        (this as unknown as EventEmitter).emit('close');
        done();
      },
      cork() {},
      uncork() {},
      flushHeaders() {},
      destroy() {
        done();
      },
    });
    fleet.server.emit('request', inc, out);
  });
}

async function batch(n: number, concurrency = 32): Promise<void> {
  let left = n;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await one();
    }),
  );
}

await batch(20_000); // warm
if (process.send && process.argv.includes('--ipc')) {
  // driven by another process (an A/B of two builds, interleaved): one batch per message, its µs back
  process.on('message', async (n: number) => {
    if (n <= 0) {
      await fleet.stop(0);
      process.exit(0);
    }
    const c0 = process.cpuUsage();
    await batch(n);
    const c = process.cpuUsage(c0);
    process.send!((c.user + c.system) / n);
  });
  process.send('ready');
} else {
  const per: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const c0 = process.cpuUsage();
    await batch(requests);
    const c = process.cpuUsage(c0);
    per.push((c.user + c.system) / requests);
    console.log(`round ${r + 1}: ${per[r]!.toFixed(1)} µs CPU per request`);
  }
  per.sort((a, b) => a - b);
  console.log(
    `median ${per[Math.floor(per.length / 2)]!.toFixed(1)} µs per request (${written} body bytes written)`,
  );
  await fleet.stop(0);
  process.exit(0);
}
