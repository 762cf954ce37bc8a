/**
 * The floor of a watch's first event through any proxy on the real bed (issue 33, ../cases/real.ts
 * real-watch): a copy-only TLS proxy in the fleets' process that terminates the client's TLS (asking
 * for its client certificate, as the fleets do), and once the request head is in, opens ONE upstream TLS
 * connection to one member (its admin identity, the last session resumed, as the fleet's watch connections
 * do), writes the client's head there unchanged and pipes the bytes both ways. No parsing beyond the end of
 * the head, no merge, no rewrite: what a proxy hop alone adds to a watch's first event. A fleet ÷ this is
 * what the fleet adds beyond the hop; this ÷ direct is what any proxy pays here.
 */
import type { AddressInfo } from 'node:net';
import {
  createSecureContext,
  createServer,
  type SecureContext,
  type TLSSocket,
  connect as tlsConnect,
} from 'node:tls';

export interface FloorUpstream {
  /** https://host:port of the member */
  url: string;
  ca: string;
  cert: string;
  key: string;
}

export interface TlsFloorProxy {
  /** https://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export async function startTlsFloorProxy(o: {
  serving: { cert: string; key: string };
  /** the CA of the client certificates it asks for (the fleets') */
  clientCA: string;
  upstream: FloorUpstream;
}): Promise<TlsFloorProxy> {
  const up = new URL(o.upstream.url);
  const host = up.hostname;
  const port = Number(up.port) || 443;
  // made once, like the fleet's per-endpoint context; the last ticket resumed, like its watch connections
  const ctx: SecureContext = createSecureContext({
    ca: o.upstream.ca,
    cert: o.upstream.cert,
    key: o.upstream.key,
  });
  let session: Buffer | undefined;
  const live = new Set<TLSSocket>();
  const server = createServer(
    { cert: o.serving.cert, key: o.serving.key, ca: o.clientCA, requestCert: true, rejectUnauthorized: true },
    (client) => {
      live.add(client);
      client.setNoDelay(true);
      let head = Buffer.alloc(0);
      let upstream: TLSSocket | undefined;
      const end = () => {
        client.destroy();
        upstream?.destroy();
        live.delete(client);
      };
      client.on('error', end);
      client.on('close', end);
      const onHead = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk]);
        if (head.indexOf(HEAD_END) < 0) return;
        client.off('data', onHead);
        client.pause();
        const sock = tlsConnect({
          host,
          port,
          servername: /^[\d.]+$/.test(host) ? undefined : host,
          secureContext: ctx,
          ALPNProtocols: ['http/1.1'],
          ...(session ? { session } : {}),
        });
        upstream = sock;
        sock.setNoDelay(true);
        sock.once('session', (s: Buffer) => {
          session = s;
        });
        sock.on('error', end);
        sock.on('close', end);
        sock.write(head);
        sock.pipe(client);
        client.pipe(sock);
        client.resume();
      };
      client.on('data', onHead);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of live) c.destroy();
        server.close(() => resolve());
      }),
  };
}
