/**
 * What a socket's reads cost the reading process, its 'data' events (a new buffer per read and the stream's
 * machinery) against node:net's `onread` into one buffer (as src/platform/node.ts reads the HTTP/1.1 watch
 * connections), plain TCP or TLS: a server in a child process writes `mib` MiB down each of `conns`
 * connections, the client touches every 256th byte; CPU of this process per round, the ways alternating.
 *   node --import tsx bench/lib/watchread-ab.ts [tcp|tls] [rounds=16] [mib=3] [conns=1]
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { createServer as createTlsServer, connect as tlsConnect } from 'node:tls';
import { createTestCA } from '../../test/helpers/tls.ts';
import { median } from './stats.ts';

const [mode = 'tcp', roundsArg, mibArg, connsArg] = process.argv.slice(2);

if (mode === 'serve') {
  const { mib, pki } = JSON.parse(process.argv[3]!) as { mib: number; pki?: { key: string; cert: string } };
  const payload = randomBytes(mib * 1024 * 1024);
  const send = (s: Socket) => {
    s.on('error', () => {});
    s.end(payload);
  };
  const srv = pki ? createTlsServer(pki, send) : createServer(send);
  srv.listen(0, '127.0.0.1', () => process.send?.((srv.address() as AddressInfo).port));
} else {
  const tls = mode === 'tls';
  const rounds = Number(roundsArg ?? 16);
  const mib = Number(mibArg ?? 3);
  const conns = Number(connsArg ?? 1);
  const ca = tls ? createTestCA('watchread-ab') : undefined;
  const child = fork(process.argv[1]!, ['serve', JSON.stringify({ mib, pki: ca?.server() })], {
    execArgv: process.execArgv,
  });
  const port = await new Promise<number>((r) => child.once('message', (m) => r(m as number)));
  const shared = Buffer.allocUnsafe(64 * 1024);
  const once = (way: 'data' | 'onread') =>
    new Promise<number>((resolve, reject) => {
      let left = conns;
      let bytes = 0;
      let touched = 0;
      const c0 = process.cpuUsage();
      const take = (b: Uint8Array, n: number) => {
        bytes += n;
        for (let i = 0; i < n; i += 256) touched += b[i]!;
        return true;
      };
      for (let k = 0; k < conns; k++) {
        const onread =
          way === 'onread'
            ? { buffer: shared, callback: (n: number, b: Uint8Array) => take(b, n) }
            : undefined;
        const to = { host: '127.0.0.1', port, ...(onread ? { onread } : {}) };
        const s = tls ? tlsConnect({ ...to, ca: ca!.cert }) : connect(to);
        if (way === 'data') s.on('data', (b: Buffer) => take(b, b.length));
        s.on('error', reject);
        s.on('end', () => {
          if (--left > 0) return;
          if (bytes !== conns * mib * 1024 * 1024) reject(new Error(`read ${bytes} bytes (${touched})`));
          const c = process.cpuUsage(c0);
          resolve((c.user + c.system) / 1000);
        });
      }
    });
  const ms = { data: [] as number[], onread: [] as number[] };
  await once('data');
  await once('onread');
  for (let r = 0; r < rounds; r++)
    for (const way of r % 2 ? (['data', 'onread'] as const) : (['onread', 'data'] as const))
      ms[way].push(await once(way));
  console.log(
    `${mode}, ${conns} connection(s) x ${mib} MiB, CPU ms of the reading process (median of ${rounds}): ` +
      `'data' events ${median(ms.data).toFixed(1)}, onread into one buffer ${median(ms.onread).toFixed(1)} ` +
      `(${(median(ms.onread) / median(ms.data)).toFixed(2)}x)`,
  );
  child.kill();
}
