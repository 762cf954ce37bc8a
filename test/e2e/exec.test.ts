/**
 * exec, attach, port-forward and logs -f through the fleet with real kubectl 1.35, on Node and in workerd,
 * by fleet name at the root URL and by plain name through `/clusterspaces/member2`.
 *
 * kubectl 1.35 tries WebSocket first (exec/attach: v5.channel.k8s.io; port-forward: SPDY tunnelled in
 * WebSocket, `SPDY/3.1+portforward.k8s.io`) and falls back to a SPDY/3.1 upgrade when the WebSocket
 * handshake is refused. Node relays both; workerd relays WebSocket only (it has no raw upgrades), so the
 * forced-SPDY runs are Node-only and workerd's answer to them is checked instead.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject, SimCluster } from '../../sim/index.ts';
import { UpstreamClient } from '../../src/upstreams/client.ts';
import type { ResolvedEndpoint } from '../../src/upstreams/endpoint.ts';
import type { UpstreamRequest } from '../../src/upstreams/transport.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import type { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const WS_OFF = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false', KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' };

/** Sends `payload` to a local port and resolves with what comes back once as many bytes arrived. */
function roundTrip(port: number, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const s = connect(port, '127.0.0.1', () => s.write(payload));
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      got += d.length;
      if (got >= payload.length) {
        s.end();
        resolve(Buffer.concat(chunks));
      }
    });
    s.on('error', reject);
  });
}

/** A raw upgrade request: the status and body of a refused handshake, as kubectl sees them. */
function upgradeAnswer(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const r = httpRequest(url, { headers: { Connection: 'Upgrade', ...headers } });
    r.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    r.on('response', (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    r.on('error', reject);
    r.end();
  });
}

describe.each(RUNTIMES)('exec, attach, port-forward and logs on %s', (runtime) => {
  const f = useSimFleet(runtime);
  let k: Kubectl;
  let k2: Kubectl;
  let m2: SimCluster;
  let pod: KubeObject & Record<string, any>;
  let fleetPod: string;
  let podName: string;

  beforeAll(() => {
    k = f.kubectl();
    k2 = f.kubectl('/clusterspaces/member2');
    m2 = f.member('member2');
    pod = m2
      .list(PODS)
      .find(
        (p: any) =>
          p.metadata.namespace === 'shop' &&
          p.metadata.name.startsWith('web-') &&
          p.status?.phase === 'Running',
      ) as any;
    podName = pod.metadata.name!;
    fleetPod = `${podName}.clusterspace.member2`;
  });

  it('exec -- echo hi prints hi (root URL by fleet name, /clusterspaces/member2 by plain name)', async () => {
    const a = await k.run(['-n', 'shop', 'exec', fleetPod, '--', 'echo', 'hi']);
    expect(a).toMatchObject({ code: 0, stdout: 'hi\n', stderr: '' });
    const b = await k2.run(['-n', 'shop', 'exec', podName, '--', 'echo', 'hi']);
    expect(b).toMatchObject({ code: 0, stdout: 'hi\n', stderr: '' });
    // the exec reached member2, and only member2
    const execs = (s: SimCluster) => s.requests.filter((r) => r.url.includes('/exec?')).length;
    expect(execs(m2)).toBe(2);
    expect(execs(f.sims.members.get('member1')!) + execs(f.sims.members.get('member3')!)).toBe(0);
  });

  it('exec -i round-trips stdin; a command’s exit code comes back; built-ins work', async () => {
    const text = 'line one\nline two\n'.repeat(200);
    const c = await k.run(['-n', 'shop', 'exec', '-i', fleetPod, '--', 'cat'], { stdin: text });
    expect(c.code).toBe(0);
    expect(c.stdout).toBe(text);
    const e = await k.run(['-n', 'shop', 'exec', fleetPod, '--', 'sh', '-c', 'exit 3']);
    expect(e.code).toBe(3);
    expect(e.stderr).toContain('command terminated with exit code 3');
    const ls = await k2.run(['-n', 'shop', 'exec', podName, '--', 'ls', '/etc']);
    expect(ls.stdout.split('\n')).toContain('hostname');
    const host = await k.run(['-n', 'shop', 'exec', fleetPod, '--', 'cat', '/etc/hostname']);
    expect(host.stdout.trim()).toBe(podName);
    const env = await k.run(['-n', 'shop', 'exec', fleetPod, '--', 'env']);
    expect(env.stdout).toContain(`HOSTNAME=${podName}`);
    const date = await k.run(['-n', 'shop', 'exec', fleetPod, '--', 'date']);
    expect(date.stdout).toMatch(/^\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d UTC \d{4}\n$/);
  });

  it('refusals come back as the cluster’s Status with fleet names, status unchanged (kubectl can fall back)', async () => {
    const nf = await k.run(['-n', 'shop', 'exec', `nosuch.clusterspace.member2`, '--', 'echo']);
    expect(nf.code).not.toBe(0);
    expect(nf.stderr).toContain('pods "nosuch.clusterspace.member2" not found');
    const path = `/api/v1/namespaces/shop/pods/${fleetPod}/exec?command=echo&stdout=true`;
    const bad = await upgradeAnswer(`${f.url}${path}`, {
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
      'Sec-WebSocket-Protocol': 'v99.channel.k8s.io',
    });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ kind: 'Status', code: 400 });
    expect(bad.body).toContain('requested protocol(s) are not supported');
  });

  it('logs -f streams lines as they are produced', async () => {
    const p = k.spawn(['-n', 'shop', 'logs', '-f', fleetPod]);
    try {
      await p.waitFor(/ready/);
      m2.appendLog('shop', podName, undefined, 'first line after start');
      await p.waitFor(/first line after start/);
      m2.appendLog('shop', podName, undefined, 'second line after start');
      await p.waitFor(/second line after start/);
    } finally {
      p.stop();
    }
    const t = await k.run(['-n', 'shop', 'logs', fleetPod, '--tail=1', '--timestamps']);
    expect(t.stdout).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z second line after start\n$/);
  });

  it('attach relays the container’s output', async () => {
    const p = k.spawn(['-n', 'shop', 'attach', fleetPod]);
    try {
      // lines logged before the attach stream opened are not replayed: log until one comes through
      for (let i = 0; i < 50 && !/attached line/.test(p.output()); i++) {
        m2.appendLog('shop', podName, undefined, `attached line ${i}`);
        await p.waitFor(/attached line/, 200).catch(() => {});
      }
      expect(p.output()).toMatch(/attached line \d+/);
    } finally {
      p.stop();
    }
  });

  for (const via of ['root', 'prefix'] as const) {
    it(`port-forward 0:80 relays bytes both ways (${via})`, async () => {
      const kc = via === 'root' ? k : k2;
      const p = kc.spawn(['-n', 'shop', 'port-forward', via === 'root' ? fleetPod : podName, '0:80']);
      try {
        const out = await p.waitFor(/Forwarding from 127\.0\.0\.1:\d+/);
        const port = Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)![1]);
        const payload = Buffer.alloc(256 * 1024);
        for (let i = 0; i < payload.length; i++) payload[i] = (i * 31 + 7) & 0xff;
        const back = await roundTrip(port, payload);
        expect(back.equals(payload)).toBe(true);
        // a second connection over the same tunnel
        expect((await roundTrip(port, Buffer.from('again\n'))).toString()).toBe('again\n');
      } finally {
        p.stop();
      }
    });
  }

  if (runtime === 'node') {
    it('the SPDY/3.1 fallback is relayed too (kubectl with WebSockets turned off)', async () => {
      const e = await k.run(['-n', 'shop', 'exec', '-i', fleetPod, '--', 'cat'], {
        stdin: 'over spdy\n',
        env: WS_OFF,
      });
      expect(e).toMatchObject({ code: 0, stdout: 'over spdy\n' });
      const p = k.spawn(['-n', 'shop', 'port-forward', fleetPod, '0:80'], { env: WS_OFF });
      try {
        const out = await p.waitFor(/Forwarding from 127\.0\.0\.1:\d+/);
        const port = Number(/Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)![1]);
        expect((await roundTrip(port, Buffer.from('spdy bytes\n'))).toString()).toBe('spdy bytes\n');
      } finally {
        p.stop();
      }
    });
  } else {
    it('a SPDY/3.1 upgrade gets a Status saying only WebSocket is relayed by this runtime', async () => {
      const e = await k.run(['-n', 'shop', 'exec', fleetPod, '--', 'echo', 'hi'], { env: WS_OFF });
      expect(e.code).not.toBe(0);
      expect(e.stderr).toContain('relays exec, attach and port-forward over WebSocket only');
    });
  }
});

describe('upgrade header hygiene', () => {
  it('keeps Upgrade, Connection, Sec-WebSocket-* and X-Stream-Protocol-Version; drops the caller’s credentials', async () => {
    const seen: UpstreamRequest[] = [];
    const client = new UpstreamClient({
      async send(_ep, req) {
        seen.push(req);
        return new Response(null, { status: 200 });
      },
    });
    const ep = {
      name: 'member2',
      server: 'http://member2',
      insecureSkipTLSVerify: false,
      timeoutMs: 1000,
      poolKey: 'm2',
      token: () => 'fleet-token',
    } as ResolvedEndpoint;
    await client.send(ep, {
      method: 'GET',
      path: '/api/v1/namespaces/x/pods/p/exec',
      upgrade: true,
      headers: new Headers({
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Key': 'k',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Protocol': 'v5.channel.k8s.io, v4.channel.k8s.io',
        'X-Stream-Protocol-Version': 'v4.channel.k8s.io',
        Authorization: 'Bearer caller-token',
        'Impersonate-User': 'root',
      }),
    });
    const h = seen[0]!.headers;
    expect(h.get('upgrade')).toBe('websocket');
    expect(h.get('connection')).toBe('Upgrade');
    expect(h.get('sec-websocket-key')).toBe('k');
    expect(h.get('sec-websocket-protocol')).toBe('v5.channel.k8s.io, v4.channel.k8s.io');
    expect(h.get('x-stream-protocol-version')).toBe('v4.channel.k8s.io');
    expect(h.get('authorization')).toBe('Bearer fleet-token');
    expect(h.get('impersonate-user')).toBeNull();
    // and an ordinary request never carries an upgrade
    await client.send(ep, {
      method: 'GET',
      path: '/x',
      headers: new Headers({ Connection: 'Upgrade', Upgrade: 'websocket' }),
    });
    expect(seen[1]!.headers.get('upgrade')).toBeNull();
  });
});
