import { describe, expect, it } from 'vitest';
import { FleetMetrics, kubeVerb } from './fleet.ts';

const LIST = {
  verb: 'LIST',
  group: '',
  version: 'v1',
  resource: 'pods',
  subresource: '',
  scope: 'cluster',
  component: 'apiserver',
};

describe('the fleet metrics', () => {
  it('counts a request by kube labels and code, in flight while it runs, timed when done', () => {
    const m = new FleetMetrics();
    let t = 1000;
    const done = m.startRequest(LIST, false, () => t);
    expect(m.inflight.get({ request_kind: 'readOnly' })).toBe(1);
    t += 250;
    done(200);
    done(200); // once only
    expect(m.inflight.get({ request_kind: 'readOnly' })).toBe(0);
    expect(m.requests.get({ ...LIST, code: '200' })).toBe(1);
    expect(m.duration.get(LIST)).toBe(1);
    expect(m.expose()).toContain(
      'apiserver_request_duration_seconds_bucket{verb="LIST",group="",version="v1",resource="pods",subresource="",scope="cluster",component="apiserver",le="0.4"} 1',
    );
  });

  it('keeps long-running requests (watches) out of the latency histogram, like kube', () => {
    const m = new FleetMetrics();
    const watch = { ...LIST, verb: 'WATCH' };
    const done = m.startRequest(watch, true, () => 0);
    expect(m.longrunning.get(watch)).toBe(1);
    done(200);
    expect(m.longrunning.get(watch)).toBe(0);
    expect(m.duration.get(watch)).toBe(0);
    expect(m.requests.get({ ...watch, code: '200' })).toBe(1);
  });

  it('tracks each cluster: latency, errors by reason, up or down, and the per-state counts', () => {
    const m = new FleetMetrics();
    m.upstream('member1', 200, 0.02);
    m.upstream('member2', undefined, 30, 'timeout');
    m.upstream('member3', 503, 0.01, 'status');
    const text = m.expose();
    expect(text).toContain('fleet_cluster_up{cluster="member1"} 1');
    expect(text).toContain('fleet_cluster_up{cluster="member2"} 0');
    expect(text).toContain('fleet_cluster_up{cluster="member3"} 1');
    expect(text).toContain('fleet_clusters{state="ready"} 2');
    expect(text).toContain('fleet_clusters{state="unreachable"} 1');
    expect(text).toContain('fleet_upstream_errors_total{cluster="member2",reason="timeout"} 1');
    expect(m.upstreamDuration.get({ cluster: 'member1', code: '200' })).toBe(1);
  });

  it('names verbs as kube-apiserver does', () => {
    expect(kubeVerb('list', 'GET')).toBe('LIST');
    expect(kubeVerb('create', 'POST')).toBe('POST');
    expect(kubeVerb('update', 'PUT')).toBe('PUT');
    expect(kubeVerb('patch', 'PATCH', 'application/apply-patch+yaml')).toBe('APPLY');
    expect(kubeVerb('patch', 'PATCH', 'application/merge-patch+json')).toBe('PATCH');
    expect(kubeVerb('', 'get')).toBe('GET');
  });
});
