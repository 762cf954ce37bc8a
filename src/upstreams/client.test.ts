import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTraceparent } from '../util/trace.ts';
import {
  connectionListed,
  forwardableRequestHeaders,
  forwardableResponseHeaders,
  UpstreamClient,
  UpstreamError,
} from './client.ts';
import type { ResolvedEndpoint } from './endpoint.ts';
import { PairHeaders } from './pair-headers.ts';
import { HeadersTimeoutError, type Transport, type UpstreamRequest } from './transport.ts';

const ep: ResolvedEndpoint = {
  name: 'member1',
  server: 'https://m1.example/prefix',
  insecureSkipTLSVerify: false,
  timeoutMs: 1_000,
  poolKey: 'm1',
  token: () => 'fleet-token',
};

/** A transport that records what it is asked and answers with `answer`. */
function recording(answer: (r: UpstreamRequest) => Promise<Response> = async () => new Response('{}')) {
  const seen: UpstreamRequest[] = [];
  const transport: Transport = {
    send: (_e, r) => {
      seen.push(r);
      return answer(r);
    },
  };
  return { seen, transport };
}

describe('request header hygiene', () => {
  it('drops hop-by-hop headers, those Connection lists, and every credential or identity claim', () => {
    const out = forwardableRequestHeaders(
      new Headers({
        Accept: 'application/json',
        'Accept-Encoding': 'gzip',
        Connection: 'keep-alive, X-Secret-Hop',
        'X-Secret-Hop': '1',
        'Keep-Alive': 'timeout=5',
        'Transfer-Encoding': 'chunked',
        Upgrade: 'websocket',
        Host: 'fleet.example',
        Authorization: 'Bearer caller',
        Cookie: 'session=1',
        'Impersonate-User': 'root',
        'Impersonate-Group': 'system:masters',
        'Impersonate-Extra-Scopes': 'all',
        'X-Remote-User': 'root',
        'X-Remote-Group': 'system:masters',
        'Cf-Access-Jwt-Assertion': 'x.y.z',
        'User-Agent': 'kubectl/v1.35',
      }),
    );
    expect([...out.keys()].sort()).toEqual(['accept', 'accept-encoding', 'user-agent']);
  });

  it('keeps end-to-end response headers and Content-Length, drops hop-by-hop ones', () => {
    const out = forwardableResponseHeaders(
      new Headers({
        'Content-Type': 'application/json',
        'Content-Length': '2',
        Connection: 'close',
        'Audit-Id': 'a',
      }),
    );
    expect([...out.keys()].sort()).toEqual(['audit-id', 'content-length', 'content-type']);
  });
});

describe('UpstreamClient', () => {
  it('the fleet client sends the fleet credential and no identity', async () => {
    const { seen, transport } = recording();
    await new UpstreamClient(transport).send(ep, {
      method: 'GET',
      path: '/api/v1/pods?limit=1',
      headers: new Headers({ Authorization: 'Bearer caller', Accept: 'x' }),
    });
    const r = seen[0]!;
    expect(r.url).toBe('https://m1.example/prefix/api/v1/pods?limit=1');
    expect(r.headers.get('authorization')).toBe('Bearer fleet-token');
    expect(r.headerLines).toEqual([]);
    expect(r.timeoutMs).toBe(1_000);
  });

  it('a bound client sends its caller as one Impersonate-Group line per group, extras encoded', async () => {
    const { seen, transport } = recording();
    const bound = new UpstreamClient(transport).forCaller({
      as: {
        mode: 'impersonate',
        identity: { user: 'alice', groups: ['a,b', 'c'], uid: 'u1', extra: { 'scopes/x': ['v'] } },
      },
    });
    await bound.send(ep, { method: 'GET', path: '/api' });
    expect(bound.caller).toMatchObject({ mode: 'impersonate' });
    const lines = seen[0]!.headerLines!;
    expect(lines.filter(([k]) => k === 'Impersonate-Group').map(([, v]) => v)).toEqual(['a,b', 'c']);
    expect(lines).toContainEqual(['Impersonate-User', 'alice']);
    expect(lines).toContainEqual(['Impersonate-Uid', 'u1']);
    expect(lines.some(([k, v]) => k.toLowerCase().startsWith('impersonate-extra-') && v === 'v')).toBe(true);
  });

  it('keeps Content-Length only for a body relayed as received, and the upgrade for upgrades', async () => {
    const { seen, transport } = recording();
    const c = new UpstreamClient(transport);
    const headers = new Headers({ 'Content-Length': '5', Connection: 'Upgrade', Upgrade: 'websocket' });
    await c.send(ep, { method: 'POST', path: '/x', headers, body: 'built' });
    expect(seen[0]!.headers.has('content-length')).toBe(false);
    expect(seen[0]!.headers.has('upgrade')).toBe(false);
    await c.send(ep, { method: 'POST', path: '/x', headers, body: new Response('12345').body });
    expect(seen[1]!.headers.get('content-length')).toBe('5');
    await c.send(ep, { method: 'GET', path: '/exec', headers, upgrade: true });
    expect(seen[2]!.headers.get('upgrade')).toBe('websocket');
    expect(seen[2]!.headers.get('connection')).toBe('Upgrade');
  });

  it('turns transport failures into UpstreamErrors and tells the audit hook, 0 for unreachable', async () => {
    const calls: Array<[string, number]> = [];
    const onAnswer = (c: string, code: number) => calls.push([c, code]);
    const down = new UpstreamClient(
      recording(async () => {
        throw Object.assign(new Error('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
      }).transport,
    ).forCaller({ as: { mode: 'impersonate', identity: { user: 'a', groups: [] } }, onAnswer });
    const e = await down.send(ep, { method: 'GET', path: '/' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e).toMatchObject({
      cluster: 'member1',
      kind: 'unreachable',
      detail: 'fetch failed (ECONNREFUSED)',
    });

    const slow = new UpstreamClient(
      recording(async () => {
        throw new HeadersTimeoutError('late');
      }).transport,
    );
    await expect(slow.send(ep, { method: 'GET', path: '/' })).rejects.toMatchObject({ kind: 'timeout' });

    const ok = new UpstreamClient(
      recording(async () => new Response('', { status: 403 })).transport,
    ).forCaller({
      as: { mode: 'impersonate', identity: { user: 'a', groups: [] } },
      onAnswer,
    });
    await ok.send(ep, { method: 'GET', path: '/' });
    expect(calls).toEqual([
      ['member1', 0],
      ['member1', 403],
    ]);
  });

  it('never dials a member Karmada calls not Ready: an UpstreamError as for an unreachable one', async () => {
    const r = recording(async () => new Response('{}'));
    const c = new UpstreamClient(r.transport);
    const e = await c
      .send(
        { ...ep, notReady: 'not Ready in Karmada: cluster is not reachable' },
        { method: 'GET', path: '/api' },
      )
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e).toMatchObject({
      cluster: 'member1',
      kind: 'unreachable',
      detail: 'not Ready in Karmada: cluster is not reachable',
    });
    expect(r.seen).toHaveLength(0);
  });

  it('rethrows a caller abort as it is, not as the cluster being down', async () => {
    const ac = new AbortController();
    const c = new UpstreamClient(
      recording(async () => {
        ac.abort();
        throw new DOMException('aborted', 'AbortError');
      }).transport,
    );
    const e = await c.send(ep, { method: 'GET', path: '/', signal: ac.signal }).catch((x: unknown) => x);
    expect(e).not.toBeInstanceOf(UpstreamError);
  });
});

describe("headers sent through a caller's transport (the Node direct relay's entries)", () => {
  const NAMES = [
    'Accept',
    'accept',
    'Connection',
    'Keep-Alive',
    'X-Drop',
    'X-Keep',
    'Authorization',
    'Cookie',
    'Impersonate-User',
    'Content-Length',
    'traceparent',
    'tracestate',
    'Upgrade',
    'Set-Cookie',
    'X-Front-Extra',
  ];
  const value = fc.constantFrom(
    '',
    ' ',
    'a',
    'x-drop',
    'keep-alive, X-Drop',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    'b ',
  );
  it('are the entries the platform path sends as a Headers (random headers, bindings and bodies)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...NAMES), value), { maxLength: 10 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        async (lines, light, bound, upgrade, streamed) => {
          const flat = lines.flat();
          const incoming = light
            ? (new PairHeaders(flat) as unknown as Headers)
            : new Headers(lines.map(([k, v]) => [k, v] as [string, string]));
          const platform = recording();
          const via = recording();
          const base = new UpstreamClient(platform.transport);
          const client = bound
            ? base.forCaller({
                as: { mode: 'impersonate', identity: { user: 'u', groups: ['g1', 'g2'] } },
                dropHeaders: new Set(['x-keep']),
                dropHeaderPrefixes: ['x-front-'],
                traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
              })
            : base;
          const body = streamed ? new ReadableStream() : null;
          const opts = { method: 'GET', path: '/api', headers: incoming, body, upgrade };
          await client.send(ep, opts);
          await client.send(ep, { ...opts, via: via.transport });
          const a = platform.seen[0]!;
          const b = via.seen[0]!;
          expect(a.headers).toBeInstanceOf(Headers);
          expect([...b.headers]).toEqual([...a.headers]);
          expect(b.headerLines).toEqual(a.headerLines);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads the names a Connection value lists, with no Set for hop-by-hop ones alone', () => {
    expect(connectionListed('keep-alive')).toBeUndefined();
    expect(connectionListed(' Keep-Alive , upgrade,')).toBeUndefined();
    expect(connectionListed('close')).toEqual(new Set(['close']));
    expect(connectionListed('keep-alive, X-Secret,  x-other ')).toEqual(new Set(['x-secret', 'x-other']));
  });

  /**
   * What `send` forwards, step by step on a Headers as the client once built it: the forwardable
   * entries, the upgrade kept, Content-Length dropped for a built body, the credential set, the binding's
   * traceparent set or an invalid received one dropped with its tracestate.
   */
  function stepwise(
    incoming: Headers,
    o: { drop: boolean; tp?: string; upgrade: boolean; streamed: boolean; authorization: string },
  ): Array<[string, string]> {
    const hop = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization'];
    hop.push('te', 'trailer', 'transfer-encoding', 'upgrade', 'host');
    const listed = (incoming.get('connection') ?? '').split(',').map((s) => s.trim().toLowerCase());
    const credential = (k: string) =>
      ['authorization', 'cookie', 'cf-access-jwt-assertion'].includes(k) ||
      k.startsWith('impersonate-') ||
      k.startsWith('x-remote-');
    const h = new Headers();
    incoming.forEach((v, k) => {
      if (hop.includes(k) || listed.includes(k) || credential(k)) return;
      if (o.drop && (k === 'x-keep' || k.startsWith('x-front-'))) return;
      h.append(k, v);
    });
    const up = incoming.get('upgrade');
    if (o.upgrade && up) {
      h.set('upgrade', up);
      h.set('connection', 'Upgrade');
    }
    if (!o.streamed) h.delete('content-length');
    h.set('authorization', o.authorization);
    if (o.tp) h.set('traceparent', o.tp);
    else if (!parseTraceparent(h.get('traceparent'))) {
      h.delete('traceparent');
      h.delete('tracestate');
    }
    return [...h];
  }

  it('are what the client built step by step on a Headers (random headers, bindings and bodies)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...NAMES), value), { maxLength: 10 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        async (lines, light, bound, upgrade, streamed) => {
          const incoming = light
            ? (new PairHeaders(lines.flat()) as unknown as Headers)
            : new Headers(lines.map(([k, v]) => [k, v] as [string, string]));
          const via = recording();
          const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
          const base = new UpstreamClient(recording().transport);
          const client = bound
            ? base.forCaller({
                as: { mode: 'impersonate', identity: { user: 'u', groups: ['g1'] } },
                dropHeaders: new Set(['x-keep']),
                dropHeaderPrefixes: ['x-front-'],
                traceparent: tp,
              })
            : base;
          const body = streamed ? new ReadableStream() : null;
          const expected = stepwise(incoming, {
            drop: bound,
            upgrade,
            streamed,
            authorization: 'Bearer fleet-token',
            ...(bound ? { tp } : {}),
          });
          await client.send(ep, {
            method: 'GET',
            path: '/api',
            headers: incoming,
            body,
            upgrade,
            via: via.transport,
          });
          expect([...via.seen[0]!.headers]).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});
