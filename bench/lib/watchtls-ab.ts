/**
 * CPU and handshake time of a watch's TLS connection (src/platform/node.ts connectWatch) with a client
 * certificate (the test PKI's), a fresh endpoint each time (a full handshake) against one endpoint whose
 * last session is resumed; client and a node:tls server in this one process, 5 rounds × 100 connections;
 * also the connect call's own time (the endpoint's TLS context, made per call or once).
 *   npx tsx bench/lib/watchtls-ab.ts
 */
import { once } from 'node:events';
import { createServer } from 'node:tls';
import { connectWatch } from '../../src/platform/node.ts';
import { createTestCA } from '../../test/helpers/tls.ts';

const ca = createTestCA();
const s = ca.server();
const server = createServer(
  { cert: s.cert, key: s.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true },
  (sock) => {
    sock.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
  },
);
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const port = (server.address() as any).port;
const c = ca.client('fleet');
const mk = () =>
  ({
    name: 'm',
    server: `https://127.0.0.1:${port}`,
    caPem: ca.cert,
    certPem: c.cert,
    keyPem: c.key,
    insecureSkipTLSVerify: false,
    timeoutMs: 10000,
  }) as any;
/** the connect call itself: what a watch's start waits for before it dials the next member */
let syncMs: number[] = [];
async function one(ep: any) {
  const t0 = performance.now();
  const sock: any = connectWatch({ tls: true, host: '127.0.0.1', port, ep });
  syncMs.push(performance.now() - t0);
  await once(sock, 'secureConnect');
  const ms = performance.now() - t0;
  sock.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
  sock.resume();
  await once(sock, 'close');
  return ms;
}
const N = 100;
const MODES = ['fresh', 'resumed'] as const;
const res: Record<(typeof MODES)[number], number[]> = { fresh: [], resumed: [] };
const cpu: Record<(typeof MODES)[number], number[]> = { fresh: [], resumed: [] };
const sync: Record<(typeof MODES)[number], number[]> = { fresh: [], resumed: [] };
const shared = mk();
await one(shared);
for (let r = 0; r < 5; r++)
  for (const mode of MODES) {
    const u0 = process.cpuUsage();
    const lat: number[] = [];
    syncMs = [];
    for (let i = 0; i < N; i++) lat.push(await one(mode === 'fresh' ? mk() : shared));
    const u = process.cpuUsage(u0);
    cpu[mode].push((u.user + u.system) / N / 1000);
    lat.sort((a, b) => a - b);
    res[mode].push(lat[N >> 1]!);
    sync[mode].push(syncMs.sort((a, b) => a - b)[N >> 1]!);
  }
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
for (const m of MODES)
  console.log(
    `${m}: CPU per connection (client+server, one process) median ${med(cpu[m]).toFixed(2)} ms [${cpu[m].map((x) => x.toFixed(2)).join(' ')}]; handshake latency median ${med(res[m]).toFixed(2)} ms [${res[m].map((x) => x.toFixed(2)).join(' ')}]; the connect call median ${med(sync[m]).toFixed(2)} ms [${sync[m].map((x) => x.toFixed(2)).join(' ')}]`,
  );
server.close();
