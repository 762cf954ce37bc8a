/**
 * One object of a member that Karmada's cluster proxy cannot dial, on Node and in workerd, with real
 * kubectl 1.35 and plain HTTP. The real proxy answers such a request with HTTP 500, a Status without a
 * reason and the Go dial error as its message (`dial tcp 172.18.0.3:6443: connect: connection refused`:
 * the UpgradeAwareHandler hands the error to the apiserver's REST responder; sim/karmada.ts and
 * sim/exec.ts answer the same). The fleet answers what it answers for a member it cannot reach itself
 * (static membership): 503 ServiceUnavailable naming the cluster, the proxy's message kept, for get,
 * update, patch, delete, logs and exec by fleet name, and through `/clusterspaces/<member>` (passthrough:
 * the proxy's 500 is not the member's answer). A reachable member's own 500 InternalError (it has
 * a reason) stays a 500, whatever its message.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const PODS = { group: '', version: 'v1', resource: 'pods' };
const NS = 'undialable';
const DOWN =
  /^cluster member2: unreachable through Karmada's cluster proxy: dial tcp \S+:6443: connect: connection refused$/;

interface StatusBody {
  kind: string;
  code: number;
  reason?: string;
  message: string;
}

/** `res` (for `what`) is the fleet's 503 naming member2, the proxy's dial error kept */
async function expectDown(what: string, res: Response): Promise<void> {
  const body = (await res.json()) as StatusBody;
  expect({ what, status: res.status, code: body.code, reason: body.reason }).toEqual({
    what,
    status: 503,
    code: 503,
    reason: 'ServiceUnavailable',
  });
  expect(body.message, what).toMatch(DOWN);
}

/** an exec upgrade (WebSocket, as kubectl 1.35 asks first) on a connection of its own: the answer's head and body when it is no 101 */
function upgrade(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': Buffer.from('fleet-undialable').toString('base64'),
        'Sec-WebSocket-Protocol': 'v5.channel.k8s.io',
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      reject(new Error('the upgrade was accepted'));
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(RUNTIMES)('a member the cluster proxy cannot dial, on %s', (runtime) => {
  const f = useSimFleet(runtime, {
    prepare: (sims) => {
      const m2 = sims.members.get('member2')!;
      const m1 = sims.members.get('member1')!;
      for (const m of [m1, m2]) {
        m.create({ group: '', version: 'v1', resource: 'namespaces' }, {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: NS },
        } as KubeObject);
        m.create(CM, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'cm', namespace: NS },
          data: { v: '1' },
        } as KubeObject);
      }
      m2.create(PODS, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: NS },
        spec: { containers: [{ name: 'main', image: 'nginx' }] },
      } as KubeObject);
    },
    config: (sims) => sims.karmadaConfig({ federation: false }),
  });
  // Karmada still calls member2 Ready (within its failure threshold): the fleet dials it through the
  // proxy and meets the dial error; a not-Ready member is never dialled (src/upstreams/client.ts)
  beforeAll(() => {
    f.sims.karmada.failureThresholdMs = 3_600_000;
  });
  const down = (v: boolean) => {
    f.member('member2').faults.down = v;
  };
  afterEach(() => {
    down(false);
    f.member('member1').faults.failRequests = undefined;
  });
  afterAll(() => down(false));

  const object = (name: string) => `${f.url}/api/v1/namespaces/${NS}/configmaps/${name}`;

  it('kubectl get, patch and delete by fleet name: 503 ServiceUnavailable naming member2', async () => {
    const k = f.kubectl();
    // up: the object is there
    const up = await k.run(['get', 'configmap', 'cm.clusterspace.member2', '-n', NS, '-o', 'name']);
    expect(up.stderr).toBe('');
    expect(up.stdout.trim()).toBe('configmap/cm.clusterspace.member2');

    down(true);
    for (const args of [
      ['get', 'configmap', 'cm.clusterspace.member2', '-n', NS],
      ['patch', 'configmap', 'cm.clusterspace.member2', '-n', NS, '-p', '{"data":{"v":"2"}}'],
      ['delete', 'configmap', 'cm.clusterspace.member2', '-n', NS],
      ['logs', 'web.clusterspace.member2', '-n', NS],
    ]) {
      const r = await k.run(args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr, args.join(' ')).toMatch(
        /Error from server \(ServiceUnavailable\): cluster member2: unreachable through Karmada's cluster proxy: dial tcp \S+:6443: connect: connection refused/,
      );
    }
    // nothing happened to the object meanwhile
    down(false);
    expect((f.member('member2').get(CM, NS, 'cm') as { data?: { v?: string } }).data?.v).toBe('1');
  });

  it('every verb on one object, and logs and exec, over plain HTTP: the 503 Status', async () => {
    down(true);
    const cm = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm.clusterspace.member2', namespace: NS },
      data: { v: '3' },
    });
    const asks: Array<[string, string, RequestInit]> = [
      ['get', object('cm.clusterspace.member2'), {}],
      [
        'update',
        object('cm.clusterspace.member2'),
        { method: 'PUT', body: cm, headers: { 'Content-Type': 'application/json' } },
      ],
      [
        'patch',
        object('cm.clusterspace.member2'),
        {
          method: 'PATCH',
          body: '{"data":{"v":"4"}}',
          headers: { 'Content-Type': 'application/merge-patch+json' },
        },
      ],
      ['delete', object('cm.clusterspace.member2'), { method: 'DELETE' }],
      [
        'create',
        `${f.url}/api/v1/namespaces/${NS}/configmaps`,
        {
          method: 'POST',
          body: cm.replace('"cm.clusterspace', '"new.clusterspace'),
          headers: { 'Content-Type': 'application/json' },
        },
      ],
      ['logs', `${f.url}/api/v1/namespaces/${NS}/pods/web.clusterspace.member2/log`, {}],
      [
        'exec without upgrade',
        `${f.url}/api/v1/namespaces/${NS}/pods/web.clusterspace.member2/exec?command=true`,
        { method: 'POST' },
      ],
    ];
    for (const [what, url, init] of asks) await expectDown(what, await fetch(url, init));
    // exec as kubectl opens it: the upgrade's answer
    const ex = await upgrade(
      `${f.url}/api/v1/namespaces/${NS}/pods/web.clusterspace.member2/exec?command=true&stdout=true`,
    );
    expect(ex.status).toBe(503);
    const st = JSON.parse(ex.body) as StatusBody;
    expect(st.reason).toBe('ServiceUnavailable');
    expect(st.message).toMatch(/^cluster member2: unreachable through Karmada's cluster proxy: dial tcp /);
  });

  it('through /clusterspaces/member2 (passthrough): get, list and watch answer the 503, kubectl says so', async () => {
    const base = `${f.url}/clusterspaces/member2/api/v1/namespaces/${NS}/configmaps`;
    const up = await fetch(`${base}/cm`);
    expect(up.status).toBe(200);
    await up.body?.cancel();
    down(true);
    for (const url of [`${base}/cm`, base, `${base}?watch=true`]) await expectDown(url, await fetch(url));
    // kubectl's discovery meets the 503 first (as with any cluster that cannot answer); --raw shows the Status
    const k = f.kubectl('/clusterspaces/member2');
    const r = await k.run(['get', 'configmap', 'cm', '-n', NS]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Error from server \(ServiceUnavailable\)/);
    const raw = await k.run(['get', '--raw', `/api/v1/namespaces/${NS}/configmaps/cm`]);
    expect(raw.code).not.toBe(0);
    expect(raw.stderr).toMatch(/cluster member2: unreachable through Karmada's cluster proxy: dial tcp/);
    // the other member's passthrough is untouched
    const other = await fetch(`${f.url}/clusterspaces/member1/api/v1/namespaces/${NS}/configmaps/cm`);
    expect(other.status).toBe(200);
    await other.body?.cancel();
  });

  it("a reachable member's own 500 (with a reason) stays a 500, even with a dial error as its message", async () => {
    f.member('member1').faults.failRequests = {
      code: 500,
      reason: 'InternalError',
      message: 'dial tcp 10.0.0.7:2379: connect: connection refused',
    };
    const res = await fetch(object('cm.clusterspace.member1'));
    const body = (await res.json()) as StatusBody;
    expect(res.status).toBe(500);
    expect(body.reason).toBe('InternalError');
    expect(body.message).toContain('dial tcp 10.0.0.7:2379');
    const r = await f.kubectl().run(['get', 'configmap', 'cm.clusterspace.member1', '-n', NS]);
    expect(r.stderr).toMatch(/Error from server \(InternalError\)/);
    // through passthrough too: the member's own answer, byte for byte
    const pass = await fetch(`${f.url}/clusterspaces/member1/api/v1/namespaces/${NS}/configmaps/cm`);
    expect(pass.status).toBe(500);
    expect(((await pass.json()) as StatusBody).reason).toBe('InternalError');
  });
});
