/**
 * The transport seam on both runtimes, against an echo upstream over real HTTP: credential and header
 * hygiene, timeouts, a down upstream, and streaming that relays chunk by chunk.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoUpstream, startEcho } from '../helpers/echo.ts';
import { RUNTIMES, type RunningFleet, startFleet } from '../helpers/fleet.ts';

describe.each(RUNTIMES)('upstream client on %s', (runtime) => {
  let cp: EchoUpstream;
  let m1: EchoUpstream;
  let fleet: RunningFleet;

  beforeAll(async () => {
    cp = await startEcho();
    m1 = await startEcho();
    fleet = await startFleet(runtime, {
      controlPlane: { server: cp.url, token: 'cp-token' },
      // the caller's token is the fleet's to check, never to forward (test/e2e/identity.test.ts: the rest)
      authentication: {
        staticTokens: { csv: 'caller-secret,carol,1001,"dev,ops"' },
        anonymous: { enabled: true },
      },
      members: {
        mode: 'static',
        clusters: [{ name: 'member1', server: m1.url, token: 'm1-token', timeoutSeconds: 1.5 }],
      },
    });
  });
  afterAll(async () => {
    await fleet?.stop();
    await cp?.close(100);
    await m1?.close(100);
  });

  it('forwards method, path, query and body; sends the fleet credential, never the caller’s', async () => {
    const res = await fetch(
      `${fleet.url}/clusterspaces/member1/api/v1/namespaces/default/configmaps?dryRun=All&x=%2Fy`,
      {
        method: 'POST',
        headers: {
          Authorization: 'Bearer caller-secret',
          'X-Remote-User': 'mallory',
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'User-Agent': 'kubectl/v1.35.2',
        },
        body: '{"kind":"ConfigMap"}',
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('x-echo')).toBe('yes');
    // the upstream's own Keep-Alive is hop-by-hop: it must not reach the client (the fleet may send its own)
    expect(res.headers.get('keep-alive')).not.toBe('timeout=5');
    const got = (await res.json()) as {
      method: string;
      path: string;
      headers: Record<string, string>;
      body: string;
    };
    expect(got.method).toBe('POST');
    expect(got.path).toBe('/api/v1/namespaces/default/configmaps?dryRun=All&x=%2Fy');
    expect(got.body).toBe('{"kind":"ConfigMap"}');
    expect(got.headers.authorization).toBe('Bearer m1-token');
    // the caller's own Impersonate-* never cross; the fleet impersonates whom it authenticated
    expect(got.headers['impersonate-user']).toBe('carol');
    expect(got.headers['impersonate-uid']).toBe('1001');
    // two Impersonate-Group lines on the wire; the echo reads them through Fetch's Headers, which joins them
    expect(got.headers['impersonate-group']).toBe('dev, ops');
    expect(got.headers['x-remote-user']).toBeUndefined();
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toBe('kubectl/v1.35.2');
  });

  it('refuses the caller’s own Impersonate-* without the right to impersonate; the member sees nothing', async () => {
    const before = m1.received.length;
    const res = await fetch(`${fleet.url}/clusterspaces/member1/api/v1/namespaces/default/configmaps`, {
      headers: {
        Authorization: 'Bearer caller-secret',
        'Impersonate-User': 'system:admin',
        'Impersonate-Group': 'system:masters',
      },
    });
    expect(res.status).toBe(403);
    const s = (await res.json()) as { reason: string; message: string };
    expect(s.reason).toBe('Forbidden');
    expect(s.message).toMatch(
      /^users "system:admin" is forbidden: User "carol" cannot impersonate resource "users"/,
    );
    expect(m1.received.length).toBe(before);
    // the check itself went to the control plane, with the fleet's credential
    const sar = cp.received.findLast((r) => r.path.includes('subjectaccessreviews'));
    expect(sar?.headers.authorization).toBe('Bearer cp-token');
    expect(sar?.headers['impersonate-user']).toBeUndefined();
  });

  it('answers a Status naming the known clusterspaces for an unknown one', async () => {
    const res = await fetch(`${fleet.url}/clusterspaces/nope/api/v1/pods`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/json');
    const s = (await res.json()) as { kind: string; reason: string; message: string };
    expect(s.kind).toBe('Status');
    expect(s.reason).toBe('NotFound');
    expect(s.message).toContain('clusterspace "nope" not found');
    expect(s.message).toContain('member1');
    expect(cp.received.some((r) => r.path.includes('nope'))).toBe(false);
  });

  it('relays a streamed body chunk by chunk and closes upstream when the client goes away', async () => {
    const ac = new AbortController();
    const res = await fetch(`${fleet.url}/clusterspaces/member1/api/v1/pods/stream?watch=true`, {
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    for (const n of [1, 2]) {
      await waitUntil(() => m1.openStreams() === 1);
      m1.push(`{"type":"ADDED","n":${n}}\n`);
      const { value } = await reader.read();
      expect(dec.decode(value)).toBe(`{"type":"ADDED","n":${n}}\n`);
    }
    ac.abort();
    // Node sees the disconnect at once; workerd notices when it next writes to the gone client
    await waitUntil(() => {
      m1.push('{"type":"BOOKMARK"}\n');
      return m1.openStreams() === 0;
    });
  });

  it('gives a 504 Status within the timeout when the upstream is slow', async () => {
    m1.delayMs = 5_000;
    const t0 = Date.now();
    const res = await fetch(`${fleet.url}/clusterspaces/member1/api/v1/pods`);
    m1.delayMs = 0;
    expect(Date.now() - t0).toBeLessThan(4_500);
    expect(res.status).toBe(504);
    const s = (await res.json()) as { reason: string; message: string };
    expect(s.reason).toBe('Timeout');
    expect(s.message).toContain('member1');
  });

  it('gives a 503 Status when the upstream is down', async () => {
    m1.down = true;
    const res = await fetch(`${fleet.url}/clusterspaces/member1/api/v1/pods`);
    m1.down = false;
    expect(res.status).toBe(503);
    const s = (await res.json()) as { kind: string; reason: string; message: string };
    expect(s.kind).toBe('Status');
    expect(s.reason).toBe('ServiceUnavailable');
    expect(s.message).toContain('cluster member1');
  });

  it('reports ready only while the control plane answers', async () => {
    expect((await fetch(`${fleet.url}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${fleet.url}/livez`)).text()).toBe('ok');
    cp.down = true;
    const res = await fetch(`${fleet.url}/readyz?verbose`);
    cp.down = false;
    expect(res.status).toBe(500);
    expect(await res.text()).toContain('[-]control-plane failed');
  });
});

async function waitUntil(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
