/**
 * Kubernetes 1.34–1.36 API machinery through the fleet's merged view, on Node and in workerd:
 * - shardSelector (KEP-5866, 1.36 alpha): not honoured across the fleet, so it is not sent to the
 *   clusters of a merged list or watch and no answer carries `shardInfo`: a client sees its selector was not
 *   applied and filters itself (a merged list's metadata is the fleet's own, never a cluster's);
 * - CBOR (KEP-4222): a CBOR body the fleet would have to rewrite is a 415 UnsupportedMediaType in
 *   kube's words (client-go then speaks JSON for that client's lifetime); merged answers are JSON when
 *   the client also accepts JSON, else a 406;
 * - kubectl's `Kubectl-Command` and `Kubectl-Session` headers reach every cluster a request goes to.
 */
import { describe, expect, it } from 'vitest';
import { openWatch } from '../faults/client.ts';
import { until } from '../faults/fleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

/** A minimal CBOR encoder (RFC 8949) for maps of strings, with kube's self-described-CBOR tag 55799. */
function cbor(v: unknown): Uint8Array<ArrayBuffer> {
  const out: number[] = [0xd9, 0xd9, 0xf7];
  const head = (major: number, n: number) => {
    if (n < 24) out.push((major << 5) | n);
    else if (n < 256) out.push((major << 5) | 24, n);
    else out.push((major << 5) | 25, n >> 8, n & 0xff);
  };
  const enc = (x: unknown): void => {
    if (typeof x === 'string') {
      const b = new TextEncoder().encode(x);
      head(3, b.length);
      out.push(...b);
    } else if (x && typeof x === 'object') {
      const entries = Object.entries(x);
      head(5, entries.length);
      for (const [k, val] of entries) {
        enc(k);
        enc(val);
      }
    } else throw new Error(`cbor: ${typeof x}`);
  };
  enc(v);
  return new Uint8Array(out);
}

describe.each(RUNTIMES)('Kubernetes 1.34–1.36 API machinery on %s', (runtime) => {
  const f = useSimFleet(runtime, {
    // without federation only member2 serves widgets (example.fleet.io): the group of one cluster
    extra: { members: (sims) => sims.karmadaConfig({ federation: false }) },
    prepare: (sims) => {
      for (const s of [sims.karmada, ...sims.members.values()]) {
        s.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: 'am' } });
        for (const n of ['s1', 's2', 's3'])
          s.create(
            { group: '', version: 'v1', resource: 'configmaps' },
            { metadata: { name: n, namespace: 'am' } },
          );
      }
    },
  });

  it('shardSelector: not sent to the clusters of a merged list or watch, and no shardInfo in a merged list', async () => {
    const sel = encodeURIComponent("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')");
    const m1 = f.member('member1');
    const session = `shard-${runtime}-${Date.now()}`;
    const list = await fetch(`${f.url}/api/v1/namespaces/am/configmaps?shardSelector=${sel}&limit=50`, {
      headers: { 'Kubectl-Session': session },
    });
    expect(list.status).toBe(200);
    const body = (await list.json()) as { metadata: Record<string, unknown>; items: unknown[] };
    expect(body.metadata.shardInfo).toBeUndefined();
    // every object, unfiltered: the client, seeing no shardInfo, filters itself
    expect(body.items.length).toBeGreaterThanOrEqual(12);
    expect(body.items.length).toBe(
      [f.sims.karmada, ...f.sims.members.values()].reduce(
        (n, s) => n + s.list({ group: '', version: 'v1', resource: 'configmaps' }, 'am').length,
        0,
      ),
    );
    for (const name of ['member1', 'member2', 'member3']) {
      const asked = f.member(name).requests.filter((r) => r.headers['kubectl-session'] === session);
      expect(asked.length, name).toBeGreaterThan(0);
      for (const r of asked) {
        const q = new URL(r.url, 'http://x').searchParams;
        expect(q.has('shardSelector'), name).toBe(false);
        expect(q.get('limit'), name).toBe('50');
      }
    }
    const before = m1.requests.length;
    const w = await openWatch(`${f.url}/api/v1/namespaces/am/configmaps?watch=true&shardSelector=${sel}`);
    try {
      await until(
        () => m1.requests.slice(before).some((r) => r.url.includes('watch=true')),
        20_000,
        'the upstream watch',
      );
      const upstream = m1.requests.slice(before).find((r) => r.url.includes('watch=true'))!;
      expect(new URL(upstream.url, 'http://x').searchParams.has('shardSelector')).toBe(false);
    } finally {
      w.close();
    }
  });

  it('CBOR: a body the fleet must rewrite is a 415 in kube words; merged answers JSON or 406', async () => {
    const res = await fetch(`${f.url}/api/v1/namespaces/am/configmaps`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/cbor', Accept: 'application/json' },
      body: cbor({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c.clusterspace.member1', namespace: 'am' },
      }),
    });
    expect(res.status).toBe(415);
    const st = (await res.json()) as { kind: string; reason: string; code: number; message: string };
    expect(st).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType', code: 415 });
    expect(st.message).toMatch(
      /^the body of the request was in an unknown format - accepted media types include: /,
    );
    expect(
      f.member('member1').get({ group: '', version: 'v1', resource: 'configmaps' }, 'am', 'c'),
    ).toBeUndefined();

    const both = await fetch(`${f.url}/api/v1/namespaces/am/configmaps`, {
      headers: { Accept: 'application/cbor, application/json' },
    });
    expect(both.status).toBe(200);
    expect(both.headers.get('content-type')).toMatch(/^application\/json/);
    await both.arrayBuffer();
    const only = await fetch(`${f.url}/api/v1/namespaces/am/configmaps`, {
      headers: { Accept: 'application/cbor' },
    });
    expect(only.status).toBe(406);
    expect(((await only.json()) as { reason: string }).reason).toBe('NotAcceptable');
    const watchOnly = await fetch(`${f.url}/api/v1/namespaces/am/configmaps?watch=true`, {
      headers: { Accept: 'application/cbor' },
    });
    expect(watchOnly.status).toBe(406);
    await watchOnly.arrayBuffer();
  });

  it('Kubectl-Command and Kubectl-Session reach every cluster of a merged list', async () => {
    const session = `s-${runtime}-${Date.now()}`;
    const res = await fetch(`${f.url}/api/v1/namespaces/am/configmaps`, {
      headers: { 'Kubectl-Command': 'kubectl get', 'Kubectl-Session': session },
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    for (const name of ['member1', 'member2', 'member3']) {
      const seen = f.member(name).requests.find((r) => r.headers['kubectl-session'] === session);
      expect(seen?.headers['kubectl-command'], name).toBe('kubectl get');
    }
  });

  it('a watch of a resource no reachable cluster serves, while one is down, is a 503, not a 404', async () => {
    const url = f.extra('members').url;
    const m2 = f.member('member2');
    m2.faults.down = true;
    try {
      // widgets: member2's alone (federation off); member1 and member3 answer 404, member2 cannot be asked
      const watch = await fetch(`${url}/apis/example.fleet.io/v1/widgets?watch=true`);
      expect(watch.status).toBe(503);
      const st = (await watch.json()) as { reason: string; message: string };
      expect(st.reason).toBe('ServiceUnavailable');
      expect(st.message).toMatch(/cluster member2/);
    } finally {
      m2.faults.down = false;
    }
    // back up: served once the fleet's membership sees Karmada call member2 Ready again (Karmada had
    // called it not Ready, and a not-Ready member is not dialled until the next membership refresh)
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ok = await fetch(`${url}/apis/example.fleet.io/v1/widgets?watch=true&timeoutSeconds=1`);
      await ok.arrayBuffer();
      if (ok.status === 200 || Date.now() > deadline) {
        expect(ok.status).toBe(200);
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    // a resource nobody serves is still kube's 404
    const none = await fetch(`${url}/apis/example.fleet.io/v1/gadgets?watch=true`);
    expect(none.status).toBe(404);
    await none.arrayBuffer();
  });
});
