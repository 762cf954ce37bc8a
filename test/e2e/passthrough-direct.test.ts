/**
 * The Node fast path of passthrough (deploy/node/relay.ts): answers written from the upstream's socket to
 * the client's. Against a scripted upstream (node:http) so that every byte, header line and timing is the
 * test's: hygiene both ways, streaming chunk by chunk (watches direct too, their end heard by the
 * metrics), a watch ended cleanly by a drain, errors as Statuses, an upstream cut mid-body, a client that goes away,
 * backpressure on a large body, request bodies.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NodeFleet, startNodeFleet } from '../../deploy/node/server.ts';
import { parseConfig } from '../../src/config/schema.ts';

const TOKEN = 'fleet-token-for-member1';

interface Seen {
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
}

/** Waits for `cond` (polled), failing after `ms`. */
async function until(cond: () => boolean, ms = 10_000, what = 'condition'): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Answer {
  status: number;
  rawHeaders: string[];
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** the response ended cleanly (false: the connection broke mid-body) */
  complete: boolean;
}

/** One request over node:http (raw header lines kept), the answer read whole or until it breaks. */
function ask(
  url: string,
  opts: { method?: string; headers?: Record<string, string | string[]>; body?: Buffer } = {},
  onChunk?: (chunk: Buffer, res: IncomingMessage) => void,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let settled = false;
      const done = (complete: boolean) => {
        if (settled) return;
        settled = true;
        resolve({
          status: res.statusCode!,
          rawHeaders: res.rawHeaders,
          headers: res.headers,
          body: Buffer.concat(chunks),
          complete,
        });
      };
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        onChunk?.(c, res);
      });
      res.on('end', () => done(true));
      res.on('aborted', () => done(false));
      res.on('error', () => done(false));
      res.on('close', () => done(res.complete));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('passthrough on Node: the direct relay', () => {
  let upstream: Server;
  let upstreamUrl: string;
  let fleet: NodeFleet;
  const seen: Seen[] = [];
  /** per path: how the scripted upstream answers */
  const scripts = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  let upstreamClosed = 0;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0]!;
        seen.push({
          method: req.method!,
          url: req.url!,
          rawHeaders: req.rawHeaders,
          body: Buffer.concat(chunks),
        });
        const script = scripts.get(path);
        if (script) return script(req, res);
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end('{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}');
      });
      res.on('close', () => {
        if (!res.writableFinished) upstreamClosed++;
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    fleet = await startNodeFleet({
      config: parseConfig({
        controlPlane: { server: upstreamUrl, token: TOKEN },
        authentication: {
          anonymous: { enabled: true },
          staticTokens: { csv: 'caller-token,carol,1042,"qa,dev"\n' },
        },
        members: {
          mode: 'static',
          clusters: [
            { name: 'member1', server: upstreamUrl, token: TOKEN, timeoutSeconds: 1 },
            // nothing listens there: the port of a server that was closed
            { name: 'gone', server: 'http://127.0.0.1:9', token: TOKEN },
          ],
        },
      }),
    });
  });

  afterAll(async () => {
    await fleet?.stop(500);
    upstream.closeAllConnections();
    await new Promise<void>((r) => upstream.close(() => r()));
  });

  const via = (path: string) => `${fleet.url}/clusterspaces/member1${path}`;

  it('relays status, header lines (case, repeats, bytes) and body; hop-by-hop ones stay behind', async () => {
    scripts.set('/api/v1/namespaces/a/configmaps/one', (_req, res) => {
      // raw lines as a cluster might send them; Connection names X-Hop as hop-by-hop
      res.writeHead(200, [
        'Content-Type',
        'application/json',
        'X-Mixed-Case',
        'kept',
        'Warning',
        '299 - "one"',
        'Warning',
        '299 - "two"',
        'Set-Cookie',
        'a=1',
        'Set-Cookie',
        'b=2',
        'X-Latin1',
        Buffer.from([0x63, 0x61, 0x66, 0xe9]).toString('latin1'),
        'Connection',
        'X-Hop',
        'X-Hop',
        'secret',
        'Keep-Alive',
        'timeout=5',
        'Proxy-Authenticate',
        'Basic',
        'Content-Length',
        '11',
      ]);
      // a Buffer body: Node then writes the head as latin1 (with a string body it would write it as UTF-8)
      res.end(Buffer.from('{"a":"one"}'));
    });
    const a = await ask(via('/api/v1/namespaces/a/configmaps/one'));
    expect(a.status).toBe(200);
    expect(a.body.toString()).toBe('{"a":"one"}');
    const names = a.rawHeaders.filter((_, i) => i % 2 === 0);
    // the upstream's spelling: written from its raw lines, not through a (lowercasing) Headers
    expect(names).toContain('X-Mixed-Case');
    expect(a.headers['warning']).toBe('299 - "one", 299 - "two"');
    expect(a.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(Buffer.from(String(a.headers['x-latin1']), 'latin1')).toEqual(
      Buffer.from([0x63, 0x61, 0x66, 0xe9]),
    );
    expect(a.headers['content-length']).toBe('11');
    expect(a.headers['x-hop']).toBeUndefined();
    expect(a.headers['proxy-authenticate']).toBeUndefined();
    // the fleet's own keep-alive, not the upstream's
    expect(a.headers['keep-alive']).not.toBe('timeout=5');
  });

  it("sends the fleet's credential and the caller's identity, never the caller's credential", async () => {
    scripts.set('/api/v1/namespaces/a/configmaps/who', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
    seen.length = 0;
    const a = await ask(via('/api/v1/namespaces/a/configmaps/who?x=1'), {
      headers: {
        Authorization: 'Bearer caller-token',
        Cookie: 'session=caller',
        'Proxy-Authorization': 'Basic eDp5',
        'X-Custom': 'passes',
      },
    });
    expect(a.status).toBe(200);
    const got = seen.find((s) => s.url.startsWith('/api/v1/namespaces/a/configmaps/who'))!;
    expect(got.url).toBe('/api/v1/namespaces/a/configmaps/who?x=1');
    const lines: Array<[string, string]> = [];
    for (let i = 0; i < got.rawHeaders.length; i += 2)
      lines.push([got.rawHeaders[i]!.toLowerCase(), got.rawHeaders[i + 1]!]);
    const values = (n: string) => lines.filter(([k]) => k === n).map(([, v]) => v);
    expect(values('authorization')).toEqual([`Bearer ${TOKEN}`]);
    expect(values('cookie')).toEqual([]);
    expect(values('proxy-authorization')).toEqual([]);
    expect(values('x-custom')).toEqual(['passes']);
    expect(values('impersonate-user')).toEqual(['carol']);
    // one line per group, as kube reads them
    expect(values('impersonate-group')).toEqual(['qa', 'dev']);
    expect(values('impersonate-uid')).toEqual(['1042']);
  });

  it('streams a body of unknown length chunk by chunk (the client has each before the next is sent)', async () => {
    let upstreamRes: ServerResponse | undefined;
    scripts.set('/api/v1/namespaces/a/configmaps', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"part":1}\n');
      upstreamRes = res;
    });
    const got: string[] = [];
    const answer = ask(via('/api/v1/namespaces/a/configmaps'), {}, (c) => got.push(c.toString()));
    await until(() => got.join('').includes('{"part":1}'), 10_000, 'the first chunk');
    upstreamRes!.write('{"part":2}\n');
    await until(() => got.join('').includes('{"part":2}'), 10_000, 'the second chunk');
    upstreamRes!.end('{"part":3}\n');
    const a = await answer;
    expect(a.complete).toBe(true);
    expect(a.body.toString()).toBe('{"part":1}\n{"part":2}\n{"part":3}\n');
  });

  /** apiserver_longrunning_requests for pod watches, as the fleet's /metrics says */
  const podWatches = async () => {
    const m = await ask(`${fleet.url}/metrics`, { headers: { Authorization: 'Bearer caller-token' } });
    expect(m.status).toBe(200);
    return m.body
      .toString()
      .split('\n')
      .filter((l) => l.startsWith('apiserver_longrunning_requests{') && l.includes('resource="pods"'))
      .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  };

  it('streams a watch event by event, direct too, and its metrics see it end', async () => {
    // the control plane (this upstream too) allows the scrape
    scripts.set('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', (_req, res) => {
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(
        '{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","status":{"allowed":true}}',
      );
    });
    let upstreamRes: ServerResponse | undefined;
    scripts.set('/api/v1/namespaces/a/pods', (req, res) => {
      expect(req.url).toContain('watch=true');
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders();
      upstreamRes = res;
    });
    const before = await podWatches();
    const events: string[] = [];
    const answer = ask(via('/api/v1/namespaces/a/pods?watch=true'), {}, (c) => events.push(c.toString()));
    await until(() => upstreamRes !== undefined, 10_000, 'the upstream watch');
    for (let i = 1; i <= 3; i++) {
      upstreamRes!.write(`{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p${i}"}}}\n`);
      await until(() => events.join('').includes(`"p${i}"`), 10_000, `event ${i}`);
    }
    expect(await podWatches()).toBe(before + 1);
    upstreamRes!.end();
    const a = await answer;
    expect(a.complete).toBe(true);
    expect(a.headers['content-encoding']).toBe('identity');
    expect(a.body.toString().trim().split('\n')).toHaveLength(3);
    // counted as over once its stream ended, not when its head left
    const t0 = Date.now();
    while ((await podWatches()) !== before && Date.now() - t0 < 10_000)
      await new Promise((r) => setTimeout(r, 20));
    expect(await podWatches()).toBe(before);
  });

  it('a watch whose client goes away is over for the metrics and upstream', async () => {
    let upstreamRes: ServerResponse | undefined;
    scripts.set('/api/v1/namespaces/b/pods', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"q1"}}}\n');
      upstreamRes = res;
    });
    const before = await podWatches();
    const closedBefore = upstreamClosed;
    const req = request(via('/api/v1/namespaces/b/pods?watch=1'), { agent: false });
    req.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      req.on('response', (res) => res.once('data', () => resolve()));
      setTimeout(() => reject(new Error('no first event')), 10_000).unref();
      req.end();
    });
    expect(await podWatches()).toBe(before + 1);
    req.destroy();
    await until(() => upstreamClosed > closedBefore, 10_000, 'the upstream watch to close');
    const t0 = Date.now();
    while ((await podWatches()) !== before && Date.now() - t0 < 10_000)
      await new Promise((r) => setTimeout(r, 20));
    expect(await podWatches()).toBe(before);
    expect(upstreamRes).toBeDefined();
  });

  it('answers an unreachable cluster and a slow one with Statuses', async () => {
    const gone = await ask(`${fleet.url}/clusterspaces/gone/api/v1/namespaces/a/configmaps/x`);
    expect(gone.status).toBe(503);
    expect(JSON.parse(gone.body.toString())).toMatchObject({ kind: 'Status', status: 'Failure', code: 503 });
    scripts.set('/api/v1/namespaces/a/configmaps/slow', () => {
      // never answers: the endpoint's 1 s timeout answers for it
    });
    const slow = await ask(via('/api/v1/namespaces/a/configmaps/slow'));
    expect(slow.status).toBe(504);
    expect(JSON.parse(slow.body.toString())).toMatchObject({ kind: 'Status', code: 504 });
  });

  it('breaks the connection when the upstream is cut mid-body (never a short clean answer)', async () => {
    scripts.set('/api/v1/namespaces/a/configmaps/cut', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '1000' });
      res.write('{"partial":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const sized = await ask(via('/api/v1/namespaces/a/configmaps/cut'));
    expect(sized.status).toBe(200);
    expect(sized.complete).toBe(false);
    scripts.set('/api/v1/namespaces/a/configmaps/cutchunked', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"partial":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const chunked = await ask(via('/api/v1/namespaces/a/configmaps/cutchunked'));
    expect(chunked.complete).toBe(false);
  });

  it('stops the upstream request when the client goes away', async () => {
    scripts.set('/api/v1/namespaces/a/configmaps/endless', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"items":[');
    });
    const before = upstreamClosed;
    await new Promise<void>((resolve, reject) => {
      const req = request(via('/api/v1/namespaces/a/configmaps/endless'), { agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => {});
      req.on('close', () => resolve());
      setTimeout(() => reject(new Error('no first chunk')), 10_000).unref();
      req.end();
    });
    await until(() => upstreamClosed > before, 10_000, 'the upstream request to close');
  });

  it('stops the upstream request when the client goes away before the answer, and counts no cluster failure', async () => {
    scripts.set('/api/v1/namespaces/a/configmaps/nohead', () => {
      // never answers within the test: the client leaves first
    });
    // the control plane (this upstream too) allows the scrape
    scripts.set('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', (_req, res) => {
      res.writeHead(201, { 'Content-Type': 'application/json' });
      res.end(
        '{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","status":{"allowed":true}}',
      );
    });
    const unreachable = async () => {
      const m = await ask(`${fleet.url}/metrics`, { headers: { Authorization: 'Bearer caller-token' } });
      expect(m.status).toBe(200);
      const line = m.body
        .toString()
        .split('\n')
        .find(
          (l) =>
            l.startsWith('fleet_upstream_errors_total{') &&
            l.includes('cluster="member1"') &&
            l.includes('reason="unreachable"'),
        );
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const failuresBefore = await unreachable();
    const closedBefore = upstreamClosed;
    const seenBefore = seen.length;
    const req = request(via('/api/v1/namespaces/a/configmaps/nohead'), { agent: false });
    req.on('error', () => {});
    req.end();
    await until(
      () => seen.slice(seenBefore).some((s) => s.url.endsWith('/nohead')),
      10_000,
      'the upstream request',
    );
    req.destroy();
    await until(() => upstreamClosed > closedBefore, 10_000, 'the upstream request to close');
    expect(await unreachable()).toBe(failuresBefore);
  });

  it('relays a large body intact, with backpressure on a slow client', async () => {
    const big = Buffer.alloc(6 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    scripts.set('/api/v1/namespaces/a/configmaps/big', (_req, res) => {
      res.writeHead(200, {
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(big.length),
      });
      res.end(big);
    });
    let paused = false;
    const a = await ask(via('/api/v1/namespaces/a/configmaps/big'), {}, (_c, res) => {
      // read slowly at first: the fleet must hold at most what the sockets buffer
      if (!paused) {
        paused = true;
        res.pause();
        setTimeout(() => res.resume(), 200);
      }
    });
    expect(a.complete).toBe(true);
    expect(createHash('sha256').update(a.body).digest('hex')).toBe(
      createHash('sha256').update(big).digest('hex'),
    );
  });

  it('sends a request body as received', async () => {
    scripts.set('/api/v1/namespaces/a/configmaps/put', (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`{"method":"${req.method}"}`);
    });
    seen.length = 0;
    const body = Buffer.from(
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"put"},"data":{"k":"v"}}',
    );
    const a = await ask(via('/api/v1/namespaces/a/configmaps/put'), {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
      body,
    });
    expect(a.status).toBe(200);
    const got = seen.find((s) => s.url === '/api/v1/namespaces/a/configmaps/put')!;
    expect(got.method).toBe('PUT');
    expect(got.body.toString()).toBe(body.toString());
  });

  // last: it drains the fleet
  it('ends a direct watch cleanly between two events when the fleet drains', async () => {
    let upstreamRes: ServerResponse | undefined;
    scripts.set('/api/v1/namespaces/c/pods', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"r1"}}}\n');
      upstreamRes = res;
    });
    const closedBefore = upstreamClosed;
    const events: string[] = [];
    const answer = ask(via('/api/v1/namespaces/c/pods?watch=true'), {}, (c) => events.push(c.toString()));
    await until(() => events.join('').includes('"r1"'), 10_000, 'the first event');
    // half an event: the drain waits for its end before it ends the stream
    upstreamRes!.write('{"type":"ADDED","object":');
    await until(() => events.join('').endsWith('"object":'), 10_000, 'half an event');
    const stopped = fleet.stop(300);
    await new Promise((r) => setTimeout(r, 100));
    upstreamRes!.write('{"kind":"Pod","metadata":{"name":"r2"}}}\n');
    const a = await answer;
    await stopped;
    expect(a.complete).toBe(true);
    expect(
      a.body
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).object.metadata.name),
    ).toEqual(['r1', 'r2']);
    await until(() => upstreamClosed > closedBefore, 10_000, 'the upstream watch to close');
  });
});
