/**
 * Request intake and request targets over raw sockets (node:net: the bytes go on the wire exactly as
 * written, no client library normalising or framing them), on Node and in workerd. A refused request
 * must be a Kubernetes Status and reach no cluster: every case counts the requests the simulated
 * clusters received.
 *
 * What each runtime hands the fleet differs, and the tests say so: Node gives the raw target
 * (IncomingMessage.url), so every dot segment is refused; workerd resolves dot segments before the
 * worker runs (request.url holds the resolved path), so there only what survives (encoded slashes) can
 * be refused, and a resolved path is routed as what it resolved to.
 */
import { connect } from 'node:net';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { type ServedHandle, serveFetch } from '../../deploy/node/http.ts';
import { limitsSchema } from '../../src/config/security.ts';
import { failure, statusResponse } from '../../src/kube/status.ts';
import { middleware } from '../../src/middleware/filter.ts';
import { bodyIntake, limits } from '../../src/middleware/limits/index.ts';
import { recovery } from '../../src/middleware/recovery/index.ts';
import { RUNTIMES, type RunningFleet, startFleet } from '../helpers/fleet.ts';

interface RawAnswer {
  /** interim (1xx) status lines seen before the final answer */
  interim: number[];
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses what came back: 1xx interim answers, then one final answer (Content-Length or chunked). */
function parse(buf: Buffer): RawAnswer | undefined {
  const interim: number[] = [];
  let at = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) return undefined;
    const head = buf.subarray(at, end).toString('latin1').split('\r\n');
    const status = Number(head[0]!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const l of head.slice(1)) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    at = end + 4;
    if (status >= 100 && status < 200) {
      interim.push(status);
      continue;
    }
    const rest = buf.subarray(at);
    if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      if (rest.length < n) return undefined;
      return { interim, status, headers, body: rest.subarray(0, n).toString('utf8') };
    }
    if (headers['transfer-encoding'] === 'chunked') {
      let body = '';
      let p = 0;
      for (;;) {
        const nl = rest.indexOf('\r\n', p);
        if (nl < 0) return undefined;
        const size = Number.parseInt(rest.subarray(p, nl).toString('latin1'), 16);
        if (size === 0) return { interim, status, headers, body };
        if (rest.length < nl + 2 + size + 2) return undefined;
        body += rest.subarray(nl + 2, nl + 2 + size).toString('utf8');
        p = nl + 2 + size + 2;
      }
    }
    return undefined;
  }
}

/**
 * One exchange on a fresh connection: writes `head`, then (optionally) `body` once `sendBody` says so
 * (e.g. after a 100 Continue, or at once), and resolves with the parsed answer (or what arrived when
 * the connection closed).
 */
function exchange(
  url: string,
  head: string,
  opts: { body?: string; waitForContinueMs?: number; timeoutMs?: number } = {},
): Promise<RawAnswer & { raw: string; continuedBeforeBody: boolean }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let bodySent = opts.body === undefined;
    let continuedBeforeBody = false;
    const s = connect(Number(u.port), u.hostname);
    const sendBody = () => {
      if (bodySent) return;
      bodySent = true;
      s.write(opts.body!);
    };
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no answer in time; got: ${buf.toString('latin1').slice(0, 300)}`));
    }, opts.timeoutMs ?? 20_000);
    s.on('connect', () => {
      s.write(head);
      if (opts.waitForContinueMs === undefined) sendBody();
      else setTimeout(sendBody, opts.waitForContinueMs);
    });
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!bodySent && buf.includes('HTTP/1.1 100')) {
        continuedBeforeBody = true;
        sendBody();
      }
      const a = parse(buf);
      if (a) {
        clearTimeout(timer);
        s.destroy();
        resolve({ ...a, raw: buf.toString('latin1'), continuedBeforeBody });
      }
    });
    s.on('close', () => {
      clearTimeout(timer);
      const a = parse(buf);
      if (a) resolve({ ...a, raw: buf.toString('latin1'), continuedBeforeBody });
      else reject(new Error(`connection closed; got: ${buf.toString('latin1').slice(0, 300)}`));
    });
    s.on('error', () => {});
  });
}

const get = (target: string) => `GET ${target} HTTP/1.1\r\nHost: fleet\r\nConnection: close\r\n\r\n`;

describe.each(RUNTIMES)('request targets and intake on %s', (runtime) => {
  let s: ServedSimFleet;
  let fleet: RunningFleet;
  const sims = () => [s.karmada, ...s.members.values()];
  const sent = () => sims().reduce((n, x) => n + x.requests.length, 0);

  beforeAll(async () => {
    s = await startSimFleet();
    fleet = await startFleet(runtime, s.staticConfig({ authentication: { anonymous: { enabled: true } } }));
  });
  afterAll(async () => {
    await fleet?.stop();
    await s?.close();
  });

  it('encoded slashes are refused with a 400 Status from the raw target, and reach no cluster', async () => {
    for (const t of [
      '/api/v1/namespaces/default/pods/a%2fb',
      '/api/v1/namespaces/default/pods/a%2Fb/log',
      '/clusterspaces/member1%2F..%2Fmember2/api/v1/pods',
      '/clusterspaces/member1/api/v1/namespaces/default/configmaps/x%2f..%2f..',
    ]) {
      const before = sent();
      const r = await exchange(fleet.url, get(t));
      expect(r.status, t).toBe(400);
      expect(JSON.parse(r.body), t).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest' });
      expect(sent(), t).toBe(before);
    }
  });

  const DOTS = [
    '/api/v1/namespaces/%2e%2e/pods',
    '/api/v1/namespaces/default/../kube-system/pods',
    '/clusterspaces/member1/%2e%2e/karmada/api/v1/secrets',
    '/clusterspaces/member2/.%2e/member1/api/v1/namespaces',
    '/clusterspaces/member2/%2E%2E/member1/api/v1/namespaces',
    '/api/v1/namespaces/%2E/pods',
    '/api/./v1/namespaces',
  ];

  if (runtime === 'node') {
    it('dot segments, in every spelling, are refused with a 400 Status before anything resolves them', async () => {
      for (const t of [...DOTS, 'http://fleet/clusterspaces/member2/%2e%2e/member1/api/v1/namespaces']) {
        const before = sent();
        const r = await exchange(fleet.url, get(t));
        expect(r.status, t).toBe(400);
        expect(JSON.parse(r.body), t).toMatchObject({ kind: 'Status', code: 400 });
        expect(JSON.parse(r.body).message, t).toMatch(/path segment "\.\.?" is not allowed/);
        expect(sent(), t).toBe(before);
      }
    });
  } else {
    it('workerd resolves dot segments before the worker runs: the resolved path is what gets routed', async () => {
      // request.url in workerd holds /clusterspaces/member1/api/v1/namespaces for all three: the raw
      // target never reaches the worker, so the fleet routes what the runtime made of it
      const m1 = s.members.get('member1')!;
      const m2 = s.members.get('member2')!;
      for (const t of DOTS.slice(3, 5)) {
        const [b1, b2] = [m1.requests.length, m2.requests.length];
        const r = await exchange(fleet.url, get(t));
        expect(r.status, t).toBe(200);
        expect(m1.requests.length, t).toBe(b1 + 1);
        expect(m2.requests.length, t).toBe(b2);
        expect(new URL(m1.requests.at(-1)!.url).pathname, t).toBe('/api/v1/namespaces');
      }
    });
  }

  it('Expect: 100-continue is answered by the fleet and never forwarded, on every write path', async () => {
    const m1 = s.members.get('member1')!;
    const cases: Array<[string, string, string, string, number]> = [
      // passthrough create, fleet-view create (in-path clusterspace), fleet-view patch by fleet name
      [
        'POST',
        '/clusterspaces/member1/api/v1/namespaces/default/configmaps',
        'application/json',
        JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `exp-a-${runtime}` } }),
        201,
      ],
      [
        'POST',
        '/api/v1/namespaces/default/clusterspaces/member1/configmaps',
        'application/json',
        JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `exp-b-${runtime}` } }),
        201,
      ],
      [
        'PATCH',
        `/api/v1/namespaces/default/configmaps/exp-b-${runtime}.clusterspace.member1`,
        'application/merge-patch+json',
        JSON.stringify({ data: { k: 'v' } }),
        200,
      ],
    ];
    for (const [method, path, type, body, code] of cases) {
      const before = m1.requests.length;
      const r = await exchange(
        fleet.url,
        `${method} ${path} HTTP/1.1\r\nHost: fleet\r\nContent-Type: ${type}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
        // a client that got no 100 sends its body anyway after a while (curl: 1 s)
        { body, waitForContinueMs: 1_500 },
      );
      expect(r.status, `${method} ${path}: ${r.body}`).toBe(code);
      // Node answers 100 Continue before the body; workerd sends no interim answer (documented)
      if (runtime === 'node') expect(r.continuedBeforeBody, path).toBe(true);
      const upstream = m1.requests.slice(before).filter((x) => x.method === method);
      expect(upstream.length, path).toBe(1);
      expect(upstream[0]!.headers.expect, path).toBeUndefined();
    }
    expect(
      (m1.get({ group: '', version: 'v1', resource: 'configmaps' }, 'default', `exp-b-${runtime}`) as any)
        .data,
    ).toEqual({ k: 'v' });
  });

  it('a SPDY attempt is answered by the runtime, also when a proxy dropped its Upgrade header', async () => {
    const m2 = s.members.get('member2')!;
    const pod = (m2.list({ group: '', version: 'v1', resource: 'pods' }) as any[]).find(
      (p) => p.metadata.namespace === 'shop' && p.status?.phase === 'Running',
    );
    const name = pod.metadata.name as string;
    const exec = '/exec?command=echo&command=hi&stdout=true';
    for (const [path, upgrade] of [
      [`/api/v1/namespaces/shop/pods/${name}.clusterspace.member2${exec}`, false],
      [`/clusterspaces/member2/api/v1/namespaces/shop/pods/${name}${exec}`, false],
      [`/clusterspaces/member2/api/v1/namespaces/shop/pods/${name}${exec}`, true],
    ] as const) {
      // what kubectl's SPDY fallback sends; wrangler dev's proxy drops Upgrade/Connection on the way
      const head =
        `POST ${path} HTTP/1.1\r\nHost: fleet\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n` +
        `${upgrade ? 'Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n' : 'Connection: close\r\n'}Content-Length: 0\r\n\r\n`;
      const before = m2.requests.filter((r) => r.url.includes('/exec?')).length;
      if (runtime === 'workerd') {
        const r = await exchange(fleet.url, head);
        expect(r.status, path).toBe(400);
        expect(JSON.parse(r.body).message, path).toMatch(
          /relays exec, attach and port-forward over WebSocket only .*the SPDY\/3\.1 upgrade needs the Node server/,
        );
        expect(m2.requests.filter((r) => r.url.includes('/exec?')).length, path).toBe(before);
      } else if (!upgrade) {
        // Node has no proxy in front: without Upgrade the cluster says what kube-apiserver says
        const r = await exchange(fleet.url, head);
        expect(r.status, path).toBe(400);
        expect(r.body, path).toContain('Upgrade request required');
      }
    }
  });

  it('malformed framing and oversized heads are refused before the app, and reach no cluster', async () => {
    const before = sent();
    const cases = [
      // both framings at once (a request-smuggling shape)
      'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: fleet\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      // a chunk size that is not hex
      'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: fleet\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      // a head far over the fleet's header limit
      `GET /api/v1/pods HTTP/1.1\r\nHost: fleet\r\nX-Pad: ${'p'.repeat(100 * 1024)}\r\n\r\n`,
    ];
    const statuses: number[] = [];
    for (const c of cases) {
      const r = await exchange(fleet.url, c);
      statuses.push(r.status);
      expect(r.status, c.slice(0, 60)).toBeGreaterThanOrEqual(400);
      expect(r.status, c.slice(0, 60)).toBeLessThan(500);
      // Node's own parser errors come as Kubernetes Status JSON too (node:http clientError); what workerd
      // lets through, the fleet refuses with its own
      expect(JSON.parse(r.body), c.slice(0, 60)).toMatchObject({ kind: 'Status' });
    }
    expect(statuses).toEqual([400, 400, 431]);
    expect(sent()).toBe(before);
  });
});

describe('body intake after authentication, on the Node server', () => {
  // the chain as src/app.ts wires it with intake after authentication: limits → authn → intake → route
  const cfg = limitsSchema.parse({ maxBodyBytes: 64 * 1024 });
  let routeRan = 0;
  let served: ServedHandle;

  beforeAll(async () => {
    const app = new Hono();
    app.onError(recovery);
    app.use(middleware(limits(cfg, { intakeAfterAuthentication: true, bodyTimeoutMs: 1_000 })));
    app.use(
      middleware((c, next) =>
        c.req.header('authorization') !== 'Bearer ok'
          ? statusResponse(failure(401, 'Unauthorized', 'Unauthorized'))
          : next(),
      ),
    );
    app.use(middleware(bodyIntake(cfg, 1_000)));
    app.all('*', async (c) => {
      routeRan++;
      return c.text(`read ${(await c.req.raw.arrayBuffer()).byteLength}`);
    });
    served = await serveFetch((req, env) => app.fetch(req, env));
  });
  afterAll(async () => {
    await served?.close(200);
  });

  /** A chunked POST whose body never ends: a chunk now and then until the test lets go. */
  function endless(auth: boolean) {
    const s = connect(served.port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const chunk = `${(16 * 1024).toString(16)}\r\n${'x'.repeat(16 * 1024)}\r\n`;
    let tick: ReturnType<typeof setInterval> | undefined;
    s.on('connect', () => {
      s.write(
        `POST /apis/x HTTP/1.1\r\nHost: fleet\r\nTransfer-Encoding: chunked\r\n${auth ? 'Authorization: Bearer ok\r\n' : ''}\r\n`,
      );
      // the body starts only after the head, and never ends
      tick = setInterval(() => s.writable && s.write(chunk), 20);
    });
    s.on('error', () => {});
    const answered = new Promise<RawAnswer>((resolve, reject) => {
      s.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        const a = parse(buf);
        if (a) resolve(a);
      });
      s.on('close', () => reject(new Error(`closed unanswered: ${buf.toString('latin1').slice(0, 200)}`)));
    });
    return {
      answered,
      stop: () => {
        clearInterval(tick);
        answered.catch(() => {});
        s.destroy();
      },
    };
  }

  it('a request head that never completes gets Node’s 408 as a Status (headersTimeout), then the socket closes', async () => {
    const slow = await serveFetch(() => new Response('never'), {
      headersTimeoutMs: 400,
      requestTimeoutMs: 800,
    });
    try {
      const t0 = Date.now();
      // the head starts and stalls: no blank line ever comes
      const r = await exchange(slow.url, 'GET /api HTTP/1.1\r\nHost: fleet\r\nX-Slow: 1\r\n');
      expect(r.status).toBe(408);
      expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', code: 408, reason: 'Timeout' });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
    } finally {
      await slow.close(100);
    }
  });

  it('40 unauthenticated endless chunked POSTs are each refused while still sending: nothing is buffered', async () => {
    const rss0 = process.memoryUsage().rss;
    const clients = Array.from({ length: 40 }, () => endless(false));
    try {
      const answers = await Promise.all(clients.map((c) => c.answered));
      expect(answers.map((a) => a.status)).toEqual(Array(40).fill(401));
      // the bodies keep coming for a while after the refusals: memory must not follow them
      await new Promise((r) => setTimeout(r, 500));
      console.log(`INTAKE_RSS_DELTA_MB ${((process.memoryUsage().rss - rss0) / 2 ** 20).toFixed(1)}`);
      expect(routeRan).toBe(0);
    } finally {
      for (const c of clients) c.stop();
    }
  });

  it('an authenticated chunked body is refused at the limit (413), and a stalled one at the deadline (408)', async () => {
    const big = endless(true);
    try {
      const a = await big.answered;
      expect(a.status).toBe(413);
      expect(JSON.parse(a.body)).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge' });
    } finally {
      big.stop();
    }
    const t0 = Date.now();
    const r = await exchange(
      served.url,
      'POST /apis/x HTTP/1.1\r\nHost: fleet\r\nAuthorization: Bearer ok\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n',
    );
    expect(r.status).toBe(408);
    expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', code: 408 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(routeRan).toBe(0);
    // within the limit, it reaches the route whole
    const ok = await exchange(
      served.url,
      'POST /apis/x HTTP/1.1\r\nHost: fleet\r\nAuthorization: Bearer ok\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    );
    expect(ok.body).toBe('read 5');
  });
});
