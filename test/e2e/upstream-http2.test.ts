/**
 * `upstreamHttp2` (Node): with `alpn` the fleet offers h2 in its TLS handshake with a cluster and speaks
 * HTTP/2 to one that takes it; with `off` (the default) it offers only HTTP/1.1, even to a cluster that
 * would take h2. The member is a simulated cluster behind a TLS server that speaks both (ALPN picks), and
 * records the protocol of every request it gets: gets, lists (kubectl) and a watch all go through the
 * same pools. FLEET_UPSTREAM_HTTP2 overrides the field (checked on the mode function the platform uses).
 */
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedHandle, serveFetch } from '../../deploy/node/http.ts';
import { SimCluster, SimKarmada } from '../../sim/index.ts';
import { ConfigError } from '../../src/config/schema.ts';
import { upstreamHttp2Mode } from '../../src/platform/node.ts';
import { startFleet } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { createTestCA, type TestCA } from '../helpers/tls.ts';

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

interface TlsMember {
  url: string;
  /** `alpn protocol` of each request's connection, and its HTTP version, in arrival order */
  seen: Array<{ alpn: string | false | undefined; version: string; path: string }>;
  close(): Promise<void>;
}

/** `member` behind a TLS server that speaks h2 and HTTP/1.1 (ALPN decides), recording what each request used */
async function serveTlsMember(ca: TestCA, member: SimCluster): Promise<TlsMember> {
  const seen: TlsMember['seen'] = [];
  const pair = ca.server();
  const server = createSecureServer(
    { cert: pair.cert, key: pair.key, allowHTTP1: true },
    (req: Http2ServerRequest, res: Http2ServerResponse) => {
      void (async () => {
        const socket = req.socket as unknown as { alpnProtocol?: string | false };
        seen.push({ alpn: socket.alpnProtocol, version: req.httpVersion, path: req.url });
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers))
          if (!k.startsWith(':') && v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
        const ac = new AbortController();
        res.once('close', () => ac.abort());
        const method = req.method ?? 'GET';
        let body: BodyInit | undefined;
        if (method !== 'GET' && method !== 'HEAD') {
          const parts: Buffer[] = [];
          for await (const c of req) parts.push(c as Buffer);
          body = new Uint8Array(Buffer.concat(parts));
        }
        const answer = await member.fetch(
          new Request(`https://127.0.0.1${req.url}`, { method, headers, body, signal: ac.signal }),
        );
        const out: Record<string, string> = {};
        answer.headers.forEach((v, k) => {
          if (!HOP.has(k)) out[k] = v;
        });
        res.writeHead(answer.status, out);
        if (!answer.body) return void res.end();
        const reader = answer.body.getReader();
        res.once('close', () => void reader.cancel().catch(() => {}));
        for (;;) {
          const r = await reader.read().catch(() => undefined);
          if (!r || r.done) return void res.end();
          res.write(r.value);
        }
      })().catch(() => res.destroy());
    },
  );
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  const sessions = new Set<{ destroy(): void }>();
  server.on('session', (s) => sessions.add(s));
  server.on('secureConnection', (s) => sessions.add(s));
  return {
    url: `https://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sessions) s.destroy();
        server.close(() => ok());
      }),
  };
}

describe('upstream HTTP/2 (Node)', () => {
  let ca: TestCA;
  let member: SimCluster;
  let karmada: SimKarmada;
  let tls: TlsMember;
  let plain: ServedHandle;

  beforeAll(async () => {
    ca = createTestCA('fleet-h2-ca');
    member = new SimCluster({ name: 'member1' });
    karmada = new SimKarmada({ name: 'karmada', members: new Map([['member1', member]]) });
    member.create(
      { group: '', version: 'v1', resource: 'configmaps' },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'h2-probe', namespace: 'default' },
        data: { v: '1' },
      },
    );
    tls = await serveTlsMember(ca, member);
    plain = await serveFetch((r) => karmada.fetch(r));
  });
  afterAll(async () => {
    await tls?.close();
    await plain?.close(100);
    member?.close();
    karmada?.close();
  });

  const config = (upstreamHttp2: 'off' | 'alpn' | undefined) => ({
    controlPlane: { server: plain.url },
    members: {
      mode: 'static' as const,
      clusters: [{ name: 'member1', server: tls.url, certificateAuthorityData: ca.certData }],
    },
    federation: false,
    authentication: { anonymous: { enabled: true } },
    ...(upstreamHttp2 ? { upstreamHttp2 } : {}),
  });

  it.each([
    ['alpn', 'h2', '2.0'],
    ['off', 'http/1.1', '1.1'],
    [undefined, 'http/1.1', '1.1'],
  ] as const)('upstreamHttp2: %s → the member is spoken to in %s', async (mode, alpn, version) => {
    const prev = process.env.FLEET_UPSTREAM_HTTP2;
    delete process.env.FLEET_UPSTREAM_HTTP2;
    const fleet = await startFleet('node', config(mode));
    if (prev !== undefined) process.env.FLEET_UPSTREAM_HTTP2 = prev;
    const from = tls.seen.length;
    try {
      // a get by fleet name and a merged list, as kubectl sends them
      const k = new Kubectl(fleet.url);
      const got = await k.run([
        'get',
        'configmap',
        'h2-probe.clusterspace.member1',
        '-n',
        'default',
        '-o',
        'json',
      ]);
      expect(got.stderr).toBe('');
      expect(JSON.parse(got.stdout).data).toEqual({ v: '1' });
      const listed = await k.run(['get', 'configmaps', '-n', 'default']);
      expect(listed.stdout).toContain('h2-probe.clusterspace.member1');
      // a watch: its own dispatch path on Node (platform/node-watch.ts), the same pool
      const ac = new AbortController();
      const w = await fetch(`${fleet.url}/api/v1/namespaces/default/configmaps?watch=true`, {
        signal: ac.signal,
      });
      expect(w.status).toBe(200);
      // the clusters' events come in as many chunks as they are merged in: read until the member's is in
      const reader = w.body!.getReader();
      const dec = new TextDecoder();
      let seen = '';
      while (!seen.includes('h2-probe')) {
        const r = await reader.read();
        if (r.done) break;
        seen += dec.decode(r.value, { stream: true });
      }
      expect(seen).toContain('h2-probe');
      ac.abort();

      const mine = tls.seen.slice(from);
      expect(mine.some((s) => s.path.includes('/configmaps/h2-probe'))).toBe(true);
      expect(mine.some((s) => s.path.includes('watch=true'))).toBe(true);
      expect(new Set(mine.map((s) => s.alpn))).toEqual(new Set([alpn]));
      expect(new Set(mine.map((s) => s.version))).toEqual(new Set([version]));
    } finally {
      await fleet.stop();
    }
  });

  it('FLEET_UPSTREAM_HTTP2 overrides the field; a value it cannot mean is a configuration error', () => {
    expect(upstreamHttp2Mode('off', 'alpn')).toBe('alpn');
    expect(upstreamHttp2Mode('alpn', 'off')).toBeUndefined();
    expect(upstreamHttp2Mode('alpn', '')).toBe('alpn');
    expect(upstreamHttp2Mode('h2c', undefined)).toBe('h2c');
    expect(upstreamHttp2Mode(undefined, undefined)).toBeUndefined();
    expect(() => upstreamHttp2Mode('off', 'yes')).toThrow(ConfigError);
    expect(() => upstreamHttp2Mode('off', 'yes')).toThrow(
      /FLEET_UPSTREAM_HTTP2: "yes" is not one of off, alpn, h2c/,
    );
  });
});
