/**
 * Faults the fleet already holds, through the fault proxy on Node and in workerd, for each family of
 * requests: a merged list with a member failing before its body starts (left out, with a Warning naming
 * it), a merged list cut mid-body (never a short 200), passthrough get/list to a member that is down
 * (503), a member slower than its timeout (504 within it), exec to a member that refuses, and the same
 * through Karmada's cluster proxy.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getWhole, itemNames } from '../faults/client.ts';
import type { Fault } from '../faults/faults.ts';
import { type FaultFleet, type Membership, startFaultFleet } from '../faults/fleet.ts';
import { fleetNames, seedNamespace } from '../faults/scenario.ts';
import { RUNTIMES, type Runtime } from '../helpers/fleet.ts';
import { Kubectl } from '../helpers/kubectl.ts';

const ALL = { times: Number.POSITIVE_INFINITY };
const cases: Array<[Runtime, Membership]> = RUNTIMES.flatMap((r) => [
  [r, 'static'] as [Runtime, Membership],
  [r, 'karmada'] as [Runtime, Membership],
]);

describe.each(cases)('fault families on %s, %s membership', (runtime, membership) => {
  let ff: FaultFleet;
  const ns = `fam-${runtime}-${membership}`;
  let names: string[];
  beforeAll(async () => {
    // a 2 s member timeout (static membership): the slow-member case must see its 504 within it
    ff = await startFaultFleet(runtime, {
      membership,
      memberEndpoint: { timeoutSeconds: 2 },
      ...(membership === 'karmada' ? { config: { timeouts: { requestSeconds: 2 } } } : {}),
    });
    seedNamespace(ff, ns, { member1: 3, member2: 20, member3: 3 }, 100);
    names = await fleetNames(ff, ns);
  });
  afterEach(() => ff.reset());
  afterAll(async () => {
    await ff?.stop();
  });

  const listPath = () => `/api/v1/namespaces/${ns}/configmaps`;

  it.each([
    ['refuses', { kind: 'refuse' }],
    ['resets', { kind: 'rst' }],
    ['answers 500', { kind: 'status', code: 500 }],
    ['answers 503 without a body', { kind: 'status', code: 503, body: null }],
  ] as Array<[string, Fault]>)(
    'merged list, member2 %s before its body: the rest, and a Warning naming member2',
    async (_w, fault) => {
      const rule = ff.cluster('member2').on({ path: listPath() }, fault, ALL);
      const r = await getWhole(`${ff.url}${listPath()}`, { Accept: 'application/json' });
      expect(rule.applied).toBeGreaterThanOrEqual(1);
      expect(r.status).toBe(200);
      expect(String(r.headers.warning ?? '')).toMatch(/member2/);
      expect(itemNames(r.text)).toEqual(names.filter((n) => !n.endsWith('.clusterspace.member2')));
    },
  );

  it('merged list cut mid-body (identity): the complete item set or an error, never a short 200', async () => {
    const rule = ff.cluster('member2').on({ path: listPath() }, { kind: 'cut', phase: 'body', bytes: 1500 });
    const r = await getWhole(`${ff.url}${listPath()}`, { Accept: 'application/json' });
    expect(rule.applied).toBe(1);
    const got = r.status === 200 && r.complete ? itemNames(r.text) : undefined;
    // a parseable 200 list must be whole; otherwise the client must be able to tell (non-200, framing
    // cut short, or a body that is not a JSON list — workerd ends the stream cleanly, Node aborts it)
    expect(r.status, 'answered').not.toBe(0);
    if (got) expect(got).toEqual(names);
  });

  it.each([
    ['refuses', { kind: 'refuse' }],
    ['resets', { kind: 'rst' }],
  ] as Array<[string, Fault]>)(
    'passthrough get and list to member2 when it %s: 503 Status naming member2',
    async (_w, fault) => {
      ff.cluster('member2').on({ path: '/api/v1/namespaces/' }, fault, ALL);
      for (const path of [
        `/clusterspaces/member2/api/v1/namespaces/${ns}/configmaps`,
        `/clusterspaces/member2/api/v1/namespaces/${ns}/configmaps/cm-member2-0`,
        `/api/v1/namespaces/${ns}/configmaps/cm-member2-0.clusterspace.member2`,
      ]) {
        const r = await getWhole(`${ff.url}${path}`, { Accept: 'application/json' });
        expect(r.status, path).toBe(503);
        const s = JSON.parse(r.text) as { kind: string; reason: string; message: string };
        expect(s).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable' });
        expect(s.message).toContain('member2');
      }
    },
  );

  it('a member slower than its timeout: 504 Status within the timeout', async () => {
    ff.cluster('member2').on(
      { path: '/api/v1/namespaces/' },
      { kind: 'stall', phase: 'headers', bytes: 0 },
      ALL,
    );
    const r = await getWhole(`${ff.url}/clusterspaces/member2/api/v1/namespaces/${ns}/configmaps`, {
      Accept: 'application/json',
    });
    expect(r.ms).toBeLessThan(6_000);
    expect(r.status).toBe(504);
    expect(JSON.parse(r.text)).toMatchObject({ kind: 'Status', reason: 'Timeout' });
  });

  it('kubectl exec to a member that refuses: a clear failure, nothing run, no hang', async () => {
    const pod = ff.sims.members
      .get('member2')!
      .list({ group: '', version: 'v1', resource: 'pods' }, 'shop')
      .find((p) => p.metadata.name?.startsWith('web-'))!;
    const rule = ff.cluster('member2').on({ path: /\/(exec|pods\/[^/]+)$/ }, { kind: 'refuse' }, ALL);
    const k = new Kubectl(ff.url);
    const t0 = Date.now();
    const r = await k.run([
      '-n',
      'shop',
      'exec',
      `${pod.metadata.name}.clusterspace.member2`,
      '--',
      'echo',
      'hi',
    ]);
    expect(rule.applied).toBeGreaterThanOrEqual(1);
    expect(r.code).not.toBe(0);
    expect(r.stdout).not.toContain('hi');
    expect(r.stderr).toMatch(/member2|unavailable|refused|503|error/i);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });
});
