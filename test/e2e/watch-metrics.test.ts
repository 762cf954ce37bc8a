/**
 * The merged watch's own metrics as /metrics shows them, on Node and in workerd:
 * fleet_upstream_watches{cluster} (upstream watch streams being read) and
 * fleet_watch_resumes_total{cluster,reason} (streams re-opened after a cut).
 */
import { describe, expect, it } from 'vitest';
import { openWatch } from '../faults/client.ts';
import { until } from '../faults/fleet.ts';
import { added, putCm, seedNamespace } from '../faults/scenario.ts';
import { useFaultFleet } from '../helpers/faultfleet.ts';
import { RUNTIMES } from '../helpers/fleet.ts';

describe.each(RUNTIMES)('merged watch metrics on %s', (runtime) => {
  const ff = useFaultFleet(runtime);

  it('open upstream watches rise and fall with the watch; a cut member counts one resume', async () => {
    const ns = `wm-${runtime}`;
    seedNamespace(ff, ns, { member1: 1, member2: 1 });
    const list = (await (await fetch(`${ff.url}/api/v1/namespaces/${ns}/configmaps`)).json()) as {
      metadata: { resourceVersion: string };
    };
    const at0 = await metrics(ff.url);
    const open0 = (c: string) => at0(`fleet_upstream_watches{cluster="${c}"}`);
    const resumes0 = at0('fleet_watch_resumes_total{cluster="member2",reason="broken"}');
    // member2's connection closes after its first event, mid chunked body (a broken stream): resumed, invisibly
    const rule = ff.cluster('member2').on({ query: { watch: true } }, { kind: 'cutAfterEvents', events: 1 });
    const w = await openWatch(
      `${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${encodeURIComponent(list.metadata.resourceVersion)}`,
    );
    try {
      expect(w.status).toBe(200);
      putCm(ff, 'member1', ns, 'a');
      putCm(ff, 'member2', ns, 'b');
      await until(
        () => ['a.clusterspace.member1', 'b.clusterspace.member2'].every((n) => added(w).includes(n)),
        30_000,
        'both events',
      );
      expect(rule.applied).toBe(1);
      let now = await untilMetrics(
        ff.url,
        (m) => m('fleet_watch_resumes_total{cluster="member2",reason="broken"}') === resumes0 + 1,
        'member2 resume counted',
      );
      // member1 never cut: its stream is open, and it resumed nothing
      expect(now(`fleet_upstream_watches{cluster="member1"}`)).toBe(open0('member1') + 1);
      expect(now('fleet_watch_resumes_total{cluster="member1",reason="broken"}')).toBe(
        at0('fleet_watch_resumes_total{cluster="member1",reason="broken"}'),
      );
      now = await untilMetrics(
        ff.url,
        (m) => m(`fleet_upstream_watches{cluster="member2"}`) === open0('member2') + 1,
        'member2 open again',
      );
    } finally {
      w.close();
    }
    // the client left: every upstream stream of the watch is closed
    await untilMetrics(
      ff.url,
      (m) => ['member1', 'member2'].every((c) => m(`fleet_upstream_watches{cluster="${c}"}`) === open0(c)),
      'upstream watches closed',
    );
  });
});

describe('upstream watch connections on node', () => {
  const ff = useFaultFleet('node');

  it('fleet_upstream_watch_connections_total: a watch dials its connections (miss), a later one takes a spare (hit)', async () => {
    const ns = 'wc-node';
    seedNamespace(ff, ns, { member1: 1, member2: 1 });
    const url = `${ff.url}/api/v1/namespaces/${ns}/configmaps?watch=true`;
    const series = (result: string) => `fleet_upstream_watch_connections_total{result="${result}"}`;
    const opened = (m: Reader) => m(series('hit')) + m(series('handshaking')) + m(series('miss'));
    const text = await (await fetch(`${ff.url}/metrics`)).text();
    expect(text).toMatch(/^# TYPE fleet_upstream_watch_connections_total counter$/m);
    const at0 = await metrics(ff.url);
    const first = await openWatch(url);
    try {
      expect(first.status).toBe(200);
      // one connection per member, none waiting for it yet
      await untilMetrics(
        ff.url,
        (m) => m(series('miss')) >= at0(series('miss')) + 2,
        'the first watch dialled',
      );
    } finally {
      first.close();
    }
    // a spare is dialled a while after each watch opened: watches opened later take one
    const end = Date.now() + 20_000;
    for (;;) {
      const before = await metrics(ff.url);
      const w = await openWatch(url);
      try {
        expect(w.status).toBe(200);
        const now = await untilMetrics(ff.url, (m) => opened(m) >= opened(before) + 2, 'a watch counted');
        if (now(series('hit')) > at0(series('hit'))) break;
      } finally {
        w.close();
      }
      if (Date.now() > end) throw new Error('no watch took a spare connection in 20 s');
      await new Promise((r) => setTimeout(r, 200));
    }
  });
});

type Reader = (series: string) => number;

/** polls /metrics until `cond` holds of it (never a fixed sleep); the reader that held */
async function untilMetrics(url: string, cond: (m: Reader) => boolean, what: string): Promise<Reader> {
  const end = Date.now() + 20_000;
  for (;;) {
    const m = await metrics(url);
    if (cond(m)) return m;
    if (Date.now() > end)
      throw new Error(
        `${what} not met in 20000 ms: ${(await (await fetch(`${url}/metrics`)).text()).split('\n').filter((l) => /^fleet_(upstream_watches|watch_resumes)/.test(l))}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** a reader of /metrics now: a series' value by its name and labels as written (0 when absent) */
async function metrics(url: string): Promise<Reader> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return (series) => {
    for (const line of text.split('\n'))
      if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
    return 0;
  };
}
