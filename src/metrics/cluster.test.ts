import { describe, expect, it } from 'vitest';
import { ClusterMetrics, exposeFleet } from './cluster.ts';
import { FleetMetrics } from './fleet.ts';
import { parseExposition } from './parse.ts';

const LIST = {
  verb: 'LIST',
  group: '',
  version: 'v1',
  resource: 'pods',
  subresource: '',
  scope: 'cluster',
  component: 'apiserver',
};
const key =
  'apiserver_request_total{verb="LIST",group="",version="v1",resource="pods",subresource="",scope="cluster",component="apiserver",code="200"}';

function served(m: FleetMetrics, n: number) {
  for (let i = 0; i < n; i++) m.startRequest(LIST, false, () => 0)(200);
}

describe('the sum over worker processes', () => {
  it('adds counters and in-flight gauges, keeps the latest cluster_up and counts clusters once', () => {
    let t = 0;
    const a = new FleetMetrics({ source: () => async () => '' });
    const b = new FleetMetrics();
    served(a, 2);
    served(b, 3);
    a.startRequest(LIST, true, () => 0); // one watch open in a, never ended
    b.startRequest(LIST, true, () => 0);
    // a saw the cluster up, then b saw it down later: down is the fleet's latest knowledge
    Object.assign(a.clusterUp, { now: () => ++t });
    Object.assign(b.clusterUp, { now: () => ++t });
    a.upstream('m1', 200, 0.1);
    a.upstream('m2', 200, 0.1);
    b.upstream('m1', undefined, 1, 'unreachable');
    const got = parseExposition(exposeFleet([a.snapshot(), b.snapshot()]));
    expect(got.get(key)).toBe(5);
    expect(got.get('apiserver_current_inflight_requests{request_kind="readOnly"}')).toBe(2);
    expect(got.get('fleet_cluster_up{cluster="m1"}')).toBe(0);
    expect(got.get('fleet_cluster_up{cluster="m2"}')).toBe(1);
    expect(got.get('fleet_clusters{state="ready"}')).toBe(1);
    expect(got.get('fleet_clusters{state="unreachable"}')).toBe(1);
    expect(got.get('fleet_metrics_workers_missing')).toBe(0);
    expect(a.source).toBeTypeOf('function');
    expect(b.source).toBeUndefined();
  });

  it('never goes backwards: a gone worker leaves its counts, a late one is counted from its last answer', () => {
    const sum = new ClusterMetrics();
    const w1 = new FleetMetrics();
    const w2 = new FleetMetrics();
    served(w1, 4);
    served(w2, 6);
    w1.startRequest(LIST, true, () => 0);
    sum.record('w1', w1.snapshot());
    sum.record('w2', w2.snapshot());
    const first = parseExposition(sum.expose(['w1', 'w2'], []));
    expect(first.get(key)).toBe(10);
    expect(first.get('apiserver_current_inflight_requests{request_kind="readOnly"}')).toBe(1);

    // w1 is killed and replaced by w3, which starts from zero
    sum.retire('w1');
    const w3 = new FleetMetrics();
    served(w3, 1);
    sum.record('w3', w3.snapshot());
    const second = parseExposition(sum.expose(['w2', 'w3'], []));
    expect(second.get(key)).toBe(11);
    // what w1 had in flight ended with it
    expect(second.get('apiserver_current_inflight_requests{request_kind="readOnly"}')).toBe(0);

    // w2 does not answer the next scrape: its last answer counts, and the answer says so
    served(w3, 1);
    sum.record('w3', w3.snapshot());
    const text = sum.expose(['w3'], [{ worker: 'w2', why: 'did not answer within 2 s' }]);
    expect(text).toMatch(/^# fleet: w2 did not answer within 2 s; its counts are from its last answer\n/);
    const third = parseExposition(text);
    expect(third.get(key)).toBe(12);
    expect(third.get('fleet_metrics_workers_missing')).toBe(1);
  });
});
