/**
 * A merged watch none of whose clusters can be watched (every one answers 500) answers what the list in
 * the same state answers: a 503 Status naming each cluster and its reason, before any stream starts. A
 * 200 with Warnings that then ended at once sent informers into a re-watch loop (a watch that ends
 * cleanly is re-opened at once); an error answer is one the client backs off from and can report.
 * On Node and in workerd, through the fault proxies: raw HTTP, then @kubernetes/client-node's informer.
 */
import * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { until } from '../faults/fleet.ts';
import { seedNamespace } from '../faults/scenario.ts';
import { clientNode } from '../helpers/clientnode.ts';
import { useFaultFleet } from '../helpers/faultfleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';

const CLUSTERS = ['karmada', 'member1', 'member2', 'member3'];

describe.each(RUNTIMES)('a merged watch every cluster fails on %s', (runtime) => {
  const ff = useFaultFleet(runtime);

  /** every cluster answers its watches 500 (lists still work) */
  function failWatches() {
    for (const c of CLUSTERS)
      ff.cluster(c).on({ query: { watch: 'true' } }, { kind: 'status', code: 500 }, { times: Infinity });
  }
  /** the clusters' watches of namespace `ns` so far */
  const watchesAsked = (ns: string) =>
    CLUSTERS.flatMap((c) => ff.cluster(c).requests()).filter(
      (r) => r.path.includes(`/namespaces/${ns}/`) && r.query.get('watch') === 'true',
    ).length;

  it('answers 503 with every cluster and its reason, as the list would, and no stream', async () => {
    failWatches();
    const res = await fetch(`${ff.url}/api/v1/configmaps?watch=true&resourceVersion=0`, {
      signal: AbortSignal.timeout(20_000),
    });
    const text = await res.text();
    expect(res.status).toBe(503);
    const body = JSON.parse(text);
    expect([body.kind, body.reason, body.code]).toEqual(['Status', 'ServiceUnavailable', 503]);
    for (const c of ['member1', 'member2', 'member3']) expect(body.message).toContain(`${c}: injected 500`);
    expect(text.endsWith('}\n')).toBe(true);
  });

  it('a cluster whose watch answers keeps the stream going (the others are warned about)', async () => {
    for (const c of ['karmada', 'member1', 'member2'])
      ff.cluster(c).on({ query: { watch: 'true' } }, { kind: 'status', code: 500 }, { times: Infinity });
    const ac = new AbortController();
    const res = await fetch(`${ff.url}/api/v1/configmaps?watch=true`, { signal: ac.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('warning')).toContain('member1');
    ac.abort();
  });

  it('an informer is told why and does not re-watch in a loop', async () => {
    const ns = `waf-${runtime}`;
    seedNamespace(ff, ns, { member1: 2, member2: 2 });
    failWatches();
    const { kc, core } = clientNode(ff.url);
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${ns}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace: ns }),
    );
    const errors: Array<{ statusCode?: number; message?: string }> = [];
    informer.on('error', (e) => errors.push(e as { statusCode?: number }));
    await informer.start();
    try {
      await until(() => errors.length > 0, 30_000, "the informer's error");
      // the list worked; the watch's answer is the error, and it names what the server said
      expect(informer.list(ns)).toHaveLength(4);
      expect(errors[0]?.statusCode).toBe(503);
      // one watch per cluster for the one watch the informer opened (not a loop of them)
      expect(watchesAsked(ns)).toBeLessThanOrEqual(CLUSTERS.length);
    } finally {
      await informer.stop();
    }
  });
});
