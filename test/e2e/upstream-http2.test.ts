/**
 * `upstreamHttp2` (Node): with `alpn` the fleet offers h2 in its TLS handshake with a cluster and speaks
 * HTTP/2 to one that takes it; with `off` (the default) it offers only HTTP/1.1, even to a cluster that
 * would take h2. The member is a simulated cluster behind a TLS server that speaks both (ALPN picks), and
 * records the protocol of every request it gets: gets, lists (kubectl) and a watch all go through the
 * same pools. FLEET_UPSTREAM_HTTP2 overrides the field (checked on the mode function the platform uses).
 */
import {
  createSecureServer,
  createServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from 'node:http2';
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
  seen: Array<{ alpn: string | false | undefined; version: string; path: string; method?: string }>;
  close(): Promise<void>;
  /** sends every open h2 session a GOAWAY (NO_ERROR), as a member's server does going idle or away */
  goaway(): number;
}

/**
 * `member` behind a TLS server that speaks h2 and HTTP/1.1 (ALPN decides), or (`h2c`) a plain one that
 * speaks only h2, recording what each request used
 */
async function serveTlsMember(ca: TestCA, member: SimCluster, h2c = false): Promise<TlsMember> {
  const seen: TlsMember['seen'] = [];
  const pair = ca.server();
  const handle = (req: Http2ServerRequest, res: Http2ServerResponse) => {
    void (async () => {
      const socket = req.socket as unknown as { alpnProtocol?: string | false };
      seen.push({ alpn: socket.alpnProtocol, version: req.httpVersion, path: req.url, method: req.method });
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
  };
  const server = h2c
    ? createServer(handle)
    : createSecureServer({ cert: pair.cert, key: pair.key, allowHTTP1: true }, handle);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  const sessions = new Set<{ destroy(): void }>();
  server.on('session', (s) => sessions.add(s));
  server.on('secureConnection', (s) => sessions.add(s));
  return {
    url: `${h2c ? 'http' : 'https'}://127.0.0.1:${port}`,
    seen,
    goaway: () => {
      let n = 0;
      for (const s of sessions) {
        const h2 = s as unknown as { goaway?: (code: number) => void; closed?: boolean };
        if (typeof h2.goaway !== 'function' || h2.closed) continue;
        h2.goaway(0);
        n++;
      }
      return n;
    },
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
  let h2c: TlsMember;
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
    h2c = await serveTlsMember(ca, member, true);
    plain = await serveFetch((r) => karmada.fetch(r));
  });
  afterAll(async () => {
    await tls?.close();
    await h2c?.close();
    await plain?.close(100);
    member?.close();
    karmada?.close();
  });

  const config = (upstreamHttp2: 'off' | 'alpn' | 'h2c' | undefined, server = tls.url) => ({
    controlPlane: { server: plain.url },
    members: {
      mode: 'static' as const,
      clusters: [{ name: 'member1', server, certificateAuthorityData: ca.certData }],
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

  // alpn: writes go over HTTP/1.1 beside the h2 reads; h2c: over h2, as undici's h2 client can send them
  it.each([
    ['alpn', '1.1'],
    ['h2c', '2.0'],
  ] as const)(
    '%s: a create and a delete with DeleteOptions, next to a long-running read, answer as the member does',
    async (mode, writes) => {
      const prev = process.env.FLEET_UPSTREAM_HTTP2;
      delete process.env.FLEET_UPSTREAM_HTTP2;
      const served = mode === 'alpn' ? tls : h2c;
      const fleet = await startFleet('node', config(mode, served.url));
      if (prev !== undefined) process.env.FLEET_UPSTREAM_HTTP2 = prev;
      const from = served.seen.length;
      const ac = new AbortController();
      const json = { 'content-type': 'application/json' };
      const del = (name: string) =>
        fetch(`${fleet.url}/api/v1/namespaces/default/configmaps/${name}.clusterspace.member1`, {
          method: 'DELETE',
          headers: json,
          body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' }),
          signal: AbortSignal.timeout(20_000),
        });
      try {
        // a DELETE with a body (kubectl sends DeleteOptions): undici's h2 write threw on it (a 503)
        member.create(
          { group: '', version: 'v1', resource: 'configmaps' },
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'h2-del', namespace: 'default' } },
        );
        const first = await del('h2-del');
        expect(first.status, await first.text()).toBe(200);
        // a watch through the one-cluster proxy: a call undici's pool keeps running on its h2 connection
        const held = await fetch(
          `${fleet.url}/clusterspaces/member1/api/v1/namespaces/default/configmaps?watch=true`,
          { signal: ac.signal },
        );
        expect(held.status).toBe(200);
        // bounded: without the fix the create waited for the watch to end (undici's h2 client)
        const created = await fetch(`${fleet.url}/api/v1/namespaces/default/configmaps`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'h2-write.clusterspace.member1' },
            data: { v: '2' },
          }),
          signal: AbortSignal.timeout(20_000),
        });
        expect(created.status).toBe(201);
        expect((await created.json()).metadata.name).toBe('h2-write.clusterspace.member1');
        const deleted = await del('h2-write');
        const status = await deleted.json();
        expect(deleted.status, JSON.stringify(status)).toBe(200);
        // and the pool still answers reads afterwards
        const gone = await fetch(
          `${fleet.url}/api/v1/namespaces/default/configmaps/h2-write.clusterspace.member1`,
          { signal: AbortSignal.timeout(20_000) },
        );
        expect(gone.status).toBe(404);
        expect((await gone.json()).reason).toBe('NotFound');
        const mine = served.seen.slice(from);
        expect(mine.filter((s) => s.path.includes('watch=true')).map((s) => s.version)).toEqual(['2.0']);
        expect(mine.some((s) => s.path.includes('h2-write') && s.version === '2.0')).toBe(true);
        const written = mine.filter((s) => s.method === 'POST' || s.method === 'DELETE');
        expect(written.map((s) => s.method)).toEqual(['DELETE', 'POST', 'DELETE']);
        expect(new Set(written.map((s) => s.version))).toEqual(new Set([writes]));
      } finally {
        ac.abort();
        await fleet.stop();
      }
    },
  );

  it('alpn: a member going away (GOAWAY) ends the calls on that session, and the next ones are answered', async () => {
    const prev = process.env.FLEET_UPSTREAM_HTTP2;
    delete process.env.FLEET_UPSTREAM_HTTP2;
    const fleet = await startFleet('node', config('alpn'));
    if (prev !== undefined) process.env.FLEET_UPSTREAM_HTTP2 = prev;
    const ac = new AbortController();
    const get = (path: string) => fetch(`${fleet.url}${path}`, { signal: AbortSignal.timeout(20_000) });
    try {
      // sessions of both kinds: undici's pool (a get, a proxied watch) and the merged watches' own
      expect((await get('/api/v1/namespaces/default/configmaps/h2-probe.clusterspace.member1')).status).toBe(
        200,
      );
      // a DELETE with a body first: undici 7.30's h2 write of it broke its connection's queue, which the
      // GOAWAY then met (an assertion thrown out of the session's event: the process would die)
      const del = await fetch(
        `${fleet.url}/api/v1/namespaces/default/configmaps/h2-none.clusterspace.member1`,
        {
          method: 'DELETE',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1' }),
          signal: AbortSignal.timeout(20_000),
        },
      );
      expect(del.status).toBe(404);
      expect((await del.json()).reason).toBe('NotFound');
      const proxied = await fetch(
        `${fleet.url}/clusterspaces/member1/api/v1/namespaces/default/configmaps?watch=true`,
        { signal: ac.signal },
      );
      const merged = await fetch(`${fleet.url}/api/v1/namespaces/default/configmaps?watch=true`, {
        signal: ac.signal,
      });
      expect([proxied.status, merged.status]).toEqual([200, 200]);
      expect(tls.goaway()).toBeGreaterThan(0);
      // the proxied watch's session went away: its answer ends (or is cut), it does not hang
      const r = proxied.body!.getReader();
      for (;;) {
        const x = await r.read().catch(() => ({ done: true }));
        if (x.done) break;
      }
      // new calls go on new sessions
      const again = await get('/api/v1/namespaces/default/configmaps/h2-probe.clusterspace.member1');
      expect(again.status).toBe(200);
      const listed = await get('/api/v1/namespaces/default/configmaps');
      expect(listed.status).toBe(200);
      expect(JSON.stringify(await listed.json())).toContain('h2-probe.clusterspace.member1');
      const w = await get('/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1');
      expect(w.status).toBe(200);
      await w.text();
    } finally {
      ac.abort();
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
