import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CALLS_PER_SIGNAL, UpstreamClient, UpstreamError } from './client.ts';
import type { ResolvedEndpoint } from './endpoint.ts';
import {
  clusterspaceTargets,
  fanOut,
  fleetMembership,
  fleetTargets,
  splitForBudget,
  type Target,
} from './fanout.ts';
import { Membership } from './membership.ts';
import type { Transport } from './transport.ts';

const endpoint = (name: string): ResolvedEndpoint => ({
  name,
  server: `https://${name}.example`,
  insecureSkipTLSVerify: false,
  timeoutMs: 1_000,
  poolKey: name,
});
const target = (name: string): Target => ({ cluster: name, endpoint: endpoint(name), controlPlane: false });

/** The fleet's clusters, static members given in any order. */
function clusters(federation: boolean, members: string[]) {
  const client = new UpstreamClient({ send: async () => new Response('{}') });
  const membership = new Membership(
    endpoint('karmada'),
    { mode: 'static', members: members.map(endpoint) },
    client,
  );
  return { membership, config: { federation } };
}

describe('which clusters a clusterspace means', () => {
  it('all: the control plane first when federated, then members in the order membership gives', async () => {
    const d = clusters(true, ['m1', 'm2']);
    expect((await fleetTargets(d)).map((t) => [t.cluster, t.controlPlane])).toEqual([
      ['karmada', true],
      ['m1', false],
      ['m2', false],
    ]);
    expect(await fleetMembership(clusters(false, ['m1', 'm2']))).toEqual(['m1', 'm2']);
  });

  it('karmada is always addressable, a member by name, anything else is none', async () => {
    const d = clusters(false, ['m1']);
    expect((await clusterspaceTargets(d, 'karmada'))?.map((t) => t.cluster)).toEqual(['karmada']);
    expect((await clusterspaceTargets(d, 'm1'))?.map((t) => t.endpoint.server)).toEqual([
      'https://m1.example',
    ]);
    expect(await clusterspaceTargets(d, 'nope')).toBeUndefined();
  });
});

describe('splitForBudget', () => {
  const relay = async () => new Response();

  it('leaves fan-outs within the budget, or without a relay, as they are', () => {
    const ts = ['a', 'b', 'c'].map(target);
    expect(splitForBudget({ maxConnectionsPerRequest: 3, relay }, ts)).toBeUndefined();
    expect(splitForBudget({ maxConnectionsPerRequest: 2 }, ts)).toBeUndefined();
  });

  it('splits wider ones into groups of at most `budget`, one level however wide, order kept', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 100 }), (budget, n) => {
        const ts = Array.from({ length: n }, (_, i) => target(`c${i}`));
        const groups = splitForBudget({ maxConnectionsPerRequest: budget, relay }, ts);
        if (n <= budget) {
          expect(groups).toBeUndefined();
          return;
        }
        expect(groups!.flat()).toEqual(ts);
        expect(groups!.length).toBe(Math.ceil(n / budget));
        for (const g of groups!) expect(g.length).toBeLessThanOrEqual(budget);
      }),
    );
  });
});

describe('fanOut', () => {
  it('asks every target at once and answers in target order, whatever order the answers come in', async () => {
    const started: string[] = [];
    const release: Array<() => void> = [];
    const transport: Transport = {
      send: (e) =>
        new Promise((resolve) => {
          started.push(e.name);
          release.push(() => resolve(new Response(e.name)));
        }),
    };
    const deps = { client: new UpstreamClient(transport), maxConnectionsPerRequest: 6 };
    const p = fanOut(deps, ['a', 'b', 'c'].map(target), () => ({ method: 'GET', path: '/api' }));
    await new Promise((r) => setTimeout(r, 0));
    // all three are in flight before any answered
    expect(started).toEqual(['a', 'b', 'c']);
    for (const r of release.reverse()) r();
    const out = await p;
    expect(await Promise.all(out.map(async (o) => (o.ok ? o.res.text() : 'failed')))).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('adds no abort listener per call to the caller’s signal however wide the fan-out, puts at most CALLS_PER_SIGNAL on any signal, and aborts every call with it', async () => {
    const signals: AbortSignal[] = [];
    const transport: Transport = {
      send: async (_e, req) => {
        // as undici and the fetch transport do: each call listens to the signal it is given
        req.signal?.addEventListener('abort', () => {});
        signals.push(req.signal!);
        return new Response('{}');
      },
    };
    const caller = new AbortController();
    const names = Array.from({ length: 30 }, (_, i) => `c${i}`);
    const out = await fanOut(
      { client: new UpstreamClient(transport), maxConnectionsPerRequest: 50 },
      names.map(target),
      () => ({ method: 'GET', path: '/api', signal: caller.signal }),
    );
    expect(out.every((o) => o.ok)).toBe(true);
    expect(getEventListeners(caller.signal, 'abort').length).toBeLessThanOrEqual(1);
    // calls share derived signals, none listened to past Node's warning threshold (10)
    for (const s of new Set(signals))
      expect(getEventListeners(s, 'abort').length).toBeLessThanOrEqual(CALLS_PER_SIGNAL);
    expect(CALLS_PER_SIGNAL).toBeLessThanOrEqual(10);
    expect(new Set(signals).size).toBe(Math.ceil(30 / CALLS_PER_SIGNAL));
    caller.abort(new Error('client left'));
    expect(signals.every((s) => s.aborted && (s.reason as Error).message === 'client left')).toBe(true);
  });

  it('turns a cluster that cannot be reached into a failed outcome, and keeps the others', async () => {
    const transport: Transport = {
      send: async (e) => {
        if (e.name === 'b') throw new Error('connect ECONNREFUSED');
        return new Response('{}');
      },
    };
    const out = await fanOut(
      { client: new UpstreamClient(transport), maxConnectionsPerRequest: 6 },
      ['a', 'b'].map(target),
      () => ({
        method: 'GET',
        path: '/',
      }),
    );
    expect(out.map((o) => o.ok)).toEqual([true, false]);
    expect(!out[1]!.ok && out[1]!.error).toBeInstanceOf(UpstreamError);
  });

  it('lets a bug (not an upstream failure) through instead of calling it a cluster outage', async () => {
    const deps = {
      client: new UpstreamClient({ send: async () => new Response() }),
      maxConnectionsPerRequest: 6,
    };
    await expect(
      fanOut(deps, [target('a')], () => {
        throw new TypeError('bug');
      }),
    ).rejects.toThrow(TypeError);
  });

  it('sends every request with the bound caller, the only identity there is', async () => {
    const lines: string[] = [];
    const transport: Transport = {
      send: async (_e, r) => {
        lines.push(...(r.headerLines ?? []).map(([k, v]) => `${k}: ${v}`));
        return new Response('{}');
      },
    };
    const client = new UpstreamClient(transport).forCaller({
      as: { mode: 'impersonate', identity: { user: 'alice', groups: [] } },
    });
    await fanOut({ client, maxConnectionsPerRequest: 6 }, ['a', 'b'].map(target), () => ({
      method: 'GET',
      path: '/',
    }));
    expect(lines).toEqual(['Impersonate-User: alice', 'Impersonate-User: alice']);
  });
});
