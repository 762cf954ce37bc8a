/**
 * The fleet's metrics: kube-apiserver's request metrics under their own names and labels (dashboards and
 * alerts written for kube-apiserver work unchanged), plus the fleet's own per cluster. One instance per
 * process (Node) or isolate (Workers: the figures are that isolate's, see README "Operating"). On Node with
 * several worker processes, GET /metrics answers the sum over all of them (see ./cluster.ts).
 */
import { CLIENT_CLOSED_REQUEST } from '../kube/status.ts';
import { processMetricsSource, type RuntimeCounter, runtimeCounters } from './process.ts';
import {
  type Counter,
  type Gauge,
  type Histogram,
  type HistogramCell,
  Registry,
  type ValueCell,
} from './registry.ts';
import type { RegistrySnapshot } from './snapshot.ts';

/** kube-apiserver's apiserver_request_duration_seconds buckets */
const REQUEST_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What kube-apiserver's metrics know of a request (its RequestInfo, in kube's label vocabulary). */
export type RequestLabels = {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: string;
};

/** kube's cleanVerb: LIST/GET/WATCH/POST/PUT/PATCH/DELETE/APPLY, with LIST for collection gets */
export function kubeVerb(verb: string, method: string, patchType?: string): string {
  switch (verb) {
    case 'list':
      return 'LIST';
    case 'watch':
      return 'WATCH';
    case 'get':
      return 'GET';
    case 'create':
      return 'POST';
    case 'update':
      return 'PUT';
    case 'patch':
      return patchType === 'application/apply-patch+yaml' ? 'APPLY' : 'PATCH';
    case 'delete':
      return 'DELETE';
    case 'deletecollection':
      return 'DELETECOLLECTION';
    default:
      return method.toUpperCase();
  }
}

export const READ_ONLY_VERBS = new Set(['GET', 'LIST', 'WATCH', 'HEAD']);
const READ_ONLY = { request_kind: 'readOnly' };
const MUTATING = { request_kind: 'mutating' };

/** A cluster's upstream series, kept so that an answer counts without looking them up. */
interface ClusterCells {
  up: ValueCell;
  /** fleet_upstream_request_duration_seconds by response code */
  byCode: Map<number, HistogramCell>;
}
/** clusters whose cells are kept (the fleet's members in practice; odd names must not grow it) */
const KEPT_CLUSTERS = 4096;

export class FleetMetrics {
  readonly registry = new Registry();
  readonly requests: Counter;
  readonly aborts: Counter;
  readonly duration: Histogram;
  readonly inflight: Gauge;
  readonly longrunning: Gauge;
  readonly upstreamDuration: Histogram;
  readonly upstreamErrors: Counter;
  readonly clusterUp: Gauge;
  readonly clusters: Gauge;
  readonly upstreamWatches: Gauge;
  readonly watchResumes: Counter;
  readonly partial: Counter;
  readonly relayGroups: Counter;
  readonly sharedReads: Counter;
  readonly sharedReadsDetached: Counter;
  /** the runtime's own process-wide counts (./process.ts), each brought up to date when exposed */
  private readonly runtime: { counter: Counter; of: RuntimeCounter }[] = [];
  /** the last failure seen per cluster, for the status page (not exported: messages are not labels) */
  readonly lastErrors = new Map<string, { at: string; reason: string; message: string }>();
  /**
   * Where GET /metrics reads its text when this process is one of several (a node:cluster worker: the
   * sum over every worker, asked of the primary); absent, the route exposes this registry.
   */
  readonly source?: () => Promise<string>;

  constructor(opts: { source?: (local: FleetMetrics) => () => Promise<string> } = {}) {
    const r = this.registry;
    const L = ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'];
    this.requests = r.counter(
      'apiserver_request_total',
      'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      [...L, 'code'],
    );
    // kube counts a request its handler gave up on here, beside apiserver_request_total; the fleet counts
    // the requests whose client went away before their answer (code 499 in apiserver_request_total)
    this.aborts = r.counter(
      'apiserver_request_aborts_total',
      'Number of requests which apiserver aborted possibly due to a timeout, for each group, version, verb, resource, subresource and scope',
      ['verb', 'group', 'version', 'resource', 'subresource', 'scope'],
    );
    this.duration = r.histogram(
      'apiserver_request_duration_seconds',
      'Response latency distribution in seconds for each verb, group, version, resource, subresource, scope and component.',
      L,
      REQUEST_BUCKETS,
    );
    this.inflight = r.gauge(
      'apiserver_current_inflight_requests',
      'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      ['request_kind'],
    );
    this.longrunning = r.gauge(
      'apiserver_longrunning_requests',
      'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      L,
    );
    this.upstreamDuration = r.histogram(
      'fleet_upstream_request_duration_seconds',
      'Time from sending a request to a cluster to its response headers, per cluster and response code.',
      ['cluster', 'code'],
      UPSTREAM_BUCKETS,
    );
    this.upstreamErrors = r.counter(
      'fleet_upstream_errors_total',
      'Upstream calls that failed, per cluster and reason (unreachable, timeout, status: a 5xx answer).',
      ['cluster', 'reason'],
    );
    // a per-process observation: over processes the most recent one wins (see ./snapshot.ts)
    this.clusterUp = r.gauge(
      'fleet_cluster_up',
      'Whether the last call to the cluster reached it (1) or not (0).',
      ['cluster'],
      { merge: 'last' },
    );
    // derived from fleet_cluster_up at exposition; a merged answer derives it again from the merged flags
    this.clusters = r.gauge('fleet_clusters', 'Member clusters by state (ready, unreachable).', ['state'], {
      merge: 'max',
    });
    this.upstreamWatches = r.gauge('fleet_upstream_watches', 'Open upstream watches per cluster.', [
      'cluster',
    ]);
    this.watchResumes = r.counter(
      'fleet_watch_resumes_total',
      'Upstream watches re-opened after their stream ended or broke, per cluster and reason.',
      ['cluster', 'reason'],
    );
    this.partial = r.counter(
      'fleet_partial_responses_total',
      'Merged answers sent without a cluster (a Warning header named it), per cluster.',
      ['cluster'],
    );
    this.relayGroups = r.counter(
      'fleet_relay_groups_total',
      'Fan-out groups asked through the fleet relay (Workers: wider than the connection budget), per mode.',
      ['mode'],
    );
    this.sharedReads = r.counter(
      'fleet_shared_reads_total',
      'Upstream reads that may be shared (resourceVersion=0 lists and gets, discovery, OpenAPI), per cluster and how they were answered: hit (kept answer), coalesced (joined a call in flight), miss (asked the cluster).',
      ['cluster', 'result'],
    );
    this.sharedReadsDetached = r.counter(
      'fleet_shared_reads_detached_total',
      'Readers of a shared upstream answer detached for falling too far behind the fastest reader (they read again alone).',
      [],
    );
    for (const of of runtimeCounters())
      this.runtime.push({ counter: r.counter(of.name, of.help, [of.label]), of });
    const source = opts.source ?? processMetricsSource();
    if (source) this.source = source(this);
  }

  /** Starts counting one request; the returned function ends it with its status code. */
  startRequest(labels: RequestLabels, longRunning: boolean, now: () => number): (code: number) => void {
    const t0 = now();
    const inflight = this.inflight.cell(READ_ONLY_VERBS.has(labels.verb) ? READ_ONLY : MUTATING);
    this.inflight.addCell(inflight, 1);
    const running = longRunning ? this.longrunning.cell(labels) : undefined;
    if (running) this.longrunning.addCell(running, 1);
    let done = false;
    return (code) => {
      if (done) return;
      done = true;
      this.inflight.addCell(inflight, -1);
      if (running) this.longrunning.addCell(running, -1);
      // the request counter's labels are the request's, then `code`
      this.requests.cell(labels, String(code)).value++;
      if (code === CLIENT_CLOSED_REQUEST) {
        const { component: _, ...aborted } = labels;
        this.aborts.inc(aborted);
      }
      // kube leaves long-running requests (watches, exec) out of the latency histogram
      if (!longRunning) this.duration.cell(labels).observe((now() - t0) / 1000);
    };
  }

  /** One upstream answer (or failure, with what went wrong) of a cluster. */
  upstream(
    cluster: string,
    code: number | undefined,
    seconds: number,
    failure?: string,
    message?: string,
  ): void {
    const cells = this.clusterCells(cluster);
    if (code !== undefined) {
      let h = cells.byCode.get(code);
      if (!h) {
        h = this.upstreamDuration.cell({ cluster, code: String(code) });
        cells.byCode.set(code, h);
      }
      h.observe(seconds);
    }
    if (failure) {
      this.upstreamErrors.inc({ cluster, reason: failure });
      this.lastErrors.set(cluster, {
        at: new Date().toISOString(),
        reason: failure,
        message: message ?? failure,
      });
      // bounded by the fleet's cluster count in practice; never let a stream of odd names grow it
      if (this.lastErrors.size > 4096) this.lastErrors.delete(this.lastErrors.keys().next().value!);
    }
    const reached = failure !== 'unreachable' && failure !== 'timeout';
    this.clusterUp.setCell(cells.up, reached ? 1 : 0);
  }

  private readonly perCluster = new Map<string, ClusterCells>();
  private clusterCells(cluster: string): ClusterCells {
    let c = this.perCluster.get(cluster);
    if (!c) {
      // the registry keeps the series: a cluster forgotten here finds its own again
      if (this.perCluster.size >= KEPT_CLUSTERS) this.perCluster.clear();
      c = { up: this.clusterUp.cell({ cluster }), byCode: new Map() };
      this.perCluster.set(cluster, c);
    }
    return c;
  }

  /** The registry as data (for the sum over processes), the derived gauges brought up to date. */
  snapshot(): RegistrySnapshot {
    this.derive();
    return this.registry.snapshot();
  }

  /** The exposition, with the per-state cluster counts derived from the per-cluster gauges. */
  expose(): string {
    this.derive();
    return this.registry.expose();
  }

  private derive(): void {
    const up = this.clusterUp.entries();
    this.clusters.set({ state: 'ready' }, up.filter((e) => e.value === 1).length);
    this.clusters.set({ state: 'unreachable' }, up.filter((e) => e.value !== 1).length);
    for (const { counter, of } of this.runtime)
      for (const [v, n] of Object.entries(of.read())) counter.cell({ [of.label]: v }).value = n;
  }
}
