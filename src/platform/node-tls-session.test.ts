/**
 * A watch opens a TLS connection of its own to its cluster (node-watch-h1.ts): the next one to the same
 * endpoint resumes the session the server gave (a ticket), skipping the certificates and both signatures,
 * the client certificate's too; an endpoint resolved anew (other credentials) never resumes an old one.
 */
import { once } from 'node:events';
import tls, { createServer, type Server, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestCA } from '../../test/helpers/tls.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { connectWatch } from './node.ts';

const ca = createTestCA();
let server: Server;
let port = 0;
const peers: string[] = [];

beforeAll(async () => {
  const s = ca.server();
  server = createServer(
    { cert: s.cert, key: s.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true },
    (sock) => {
      peers.push(String(sock.getPeerCertificate().subject?.CN ?? ''));
      sock.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
    },
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as { port: number }).port;
});
afterAll(() => {
  server?.close();
});

function endpoint(): ResolvedEndpoint {
  const c = ca.client('fleet');
  return {
    name: 'member1',
    server: `https://127.0.0.1:${port}`,
    caPem: ca.cert,
    certPem: c.cert,
    keyPem: c.key,
    insecureSkipTLSVerify: false,
    timeoutMs: 10_000,
  } as ResolvedEndpoint;
}

/** one connection: whether it resumed, once the server ended it (its tickets came before) */
async function connect(ep: ResolvedEndpoint): Promise<boolean> {
  const sock = connectWatch({ tls: true, host: '127.0.0.1', port, ep }) as unknown as TLSSocket;
  await once(sock, 'secureConnect');
  const reused = sock.isSessionReused();
  sock.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
  sock.resume();
  await once(sock, 'close');
  return reused;
}

describe('TLS sessions of watch connections', () => {
  it('the second connection to an endpoint resumes; a new endpoint object starts afresh', async () => {
    const ep = endpoint();
    expect(await connect(ep)).toBe(false);
    expect(await connect(ep)).toBe(true);
    expect(await connect(ep)).toBe(true);
    expect(await connect(endpoint())).toBe(false);
    // the client certificate authenticated every connection, resumed or not
    expect(peers.every((p) => p === 'fleet')).toBe(true);
  });

  it("an endpoint's TLS context is parsed once, not per connection (a watch's start paid it per member)", async () => {
    const ep = endpoint();
    await connect(ep);
    // tls.connect makes a context from the PEMs through the module's own createSecureContext when it is
    // given none
    const made = vi.spyOn(tls, 'createSecureContext');
    try {
      expect(await connect(ep)).toBe(true);
      await connect(ep);
      expect(made).not.toHaveBeenCalled();
    } finally {
      made.mockRestore();
    }
    expect(peers.at(-1)).toBe('fleet');
  });
});
