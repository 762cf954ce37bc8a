/**
 * What a simulated cluster's resource handlers, controllers and kubelet side (exec, attach, port-forward,
 * logs) use of the cluster. SimCluster implements it; they import this instead of the cluster, so the engine has no
 * import circle.
 */
import type { Catalog, KubeObject } from './catalog/types.ts';
import type { LogStore } from './logs.ts';
import type { Gvr } from './objects.ts';
import type { Store } from './store.ts';
import type { OpenWatch } from './watch.ts';

export interface SimFaults {
  /** added before every response (headers) */
  latencyMs: number;
  /** fetch() rejects with TypeError('fetch failed: connect ECONNREFUSED') */
  down: boolean;
  /** answer the next `count` (default ∞) requests with this Status (not /healthz etc.) */
  failRequests?: { code: number; reason: string; message?: string; count?: number };
  /** each watch stream is cut (errored, not cleanly closed) after N events */
  cutWatchesAfterEvents?: number;
}

export interface SimHost {
  readonly name: string;
  readonly store: Store;
  readonly logs: LogStore;
  readonly catalog: Catalog;
  readonly faults: SimFaults;
  readonly options: {
    readonly role: 'member' | 'karmada';
    readonly podReadyDelayMs: number;
    readonly bookmarkIntervalMs: number;
  };
  registerWatch(w: OpenWatch): () => void;
  trackStream(stop: () => void): () => void;
  terminateNamespace(ns: KubeObject): KubeObject;
  clock(): Date;
  timer(fn: () => void, ms: number, repeat?: boolean): () => void;
  create(gvr: Gvr, obj: KubeObject): KubeObject;
  ensureLogs(pod: KubeObject & Record<string, any>): void;
  appendLog(namespace: string, pod: string, container: string | undefined, line: string): void;
  deleteObject(gr: string, obj: KubeObject, propagation: 'Background' | 'Orphan'): KubeObject;
  recordEvent(
    involved: KubeObject,
    reason: string,
    message: string,
    component: string,
    type?: 'Normal' | 'Warning',
    host?: string,
  ): void;
}
