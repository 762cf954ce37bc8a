/**
 * The sum over worker processes, kept by the process that supervises them (deploy/node/cluster.ts asks
 * every live worker for its snapshot over IPC and hands the answers here). Runtime-neutral, so it is
 * tested as plain data.
 *
 * Sums never go backwards: a worker that is gone (killed, crashed, replaced by one that starts from
 * zero) leaves the counters and histograms of its last answer behind, added into every later sum; a
 * worker that does not answer in time is counted from its last answer too, and the answer says so
 * (`fleet_metrics_workers_missing`, and a comment line). What a worker counted after its last answer and
 * before it died is lost, as a single process's counts are lost when it restarts.
 */
import {
  cumulativeOnly,
  exposeSnapshot,
  type MetricSnapshot,
  mergeSnapshots,
  type RegistrySnapshot,
} from './snapshot.ts';

export class ClusterMetrics {
  private readonly last = new Map<string, RegistrySnapshot>();
  private retired: RegistrySnapshot = [];

  /** `worker` answered with `snap` */
  record(worker: string, snap: RegistrySnapshot): void {
    this.last.set(worker, snap);
  }

  /** `worker` is gone: what it counted stays in the sum */
  retire(worker: string): void {
    const snap = this.last.get(worker);
    this.last.delete(worker);
    if (snap) this.retired = mergeSnapshots([this.retired, cumulativeOnly(snap)]);
  }

  /**
   * The exposition of one scrape: the workers that answered it, the last counts of those that did not
   * (named in `missing`, with why), and everything the gone ones counted.
   */
  expose(answered: readonly string[], missing: readonly { worker: string; why: string }[]): string {
    const snaps: RegistrySnapshot[] = [];
    for (const w of answered) {
      const s = this.last.get(w);
      if (s) snaps.push(s);
    }
    for (const { worker } of missing) {
      const s = this.last.get(worker);
      if (s) snaps.push(cumulativeOnly(s));
    }
    snaps.push(this.retired);
    const notes = missing.map(
      ({ worker, why }) => `# fleet: ${worker} ${why}; its counts are from its last answer`,
    );
    return exposeFleet(snaps, missing.length, notes);
  }
}

/**
 * Merged snapshots of the fleet's processes as one exposition: `fleet_clusters` counted again from the
 * merged `fleet_cluster_up` (a sum of each process's counts would count every cluster once per process),
 * and `fleet_metrics_workers_missing` added.
 */
export function exposeFleet(snaps: readonly RegistrySnapshot[], missing = 0, notes: string[] = []): string {
  const merged = mergeSnapshots(snaps);
  const up = merged.find((m) => m.name === 'fleet_cluster_up');
  const clusters = merged.find((m) => m.name === 'fleet_clusters');
  if (up && clusters && clusters.type === 'gauge') {
    const ready = up.series.filter((s) => 'value' in s && s.value === 1).length;
    clusters.series = [
      { labels: { state: 'ready' }, value: ready },
      { labels: { state: 'unreachable' }, value: up.series.length - ready },
    ];
  }
  const gauge: MetricSnapshot = {
    type: 'gauge',
    merge: 'sum',
    name: 'fleet_metrics_workers_missing',
    help: 'Worker processes that did not answer this scrape in time (their counts are from their last answer).',
    labelNames: [],
    series: [{ labels: {}, value: missing }],
  };
  const text = exposeSnapshot([...merged, gauge]);
  return notes.length ? `${notes.join('\n')}\n${text}` : text;
}
