/**
 * The one process-wide setting of the metrics: a process that is one of several serving the same port
 * (a node:cluster worker, deploy/node/worker.ts) binds, before it builds its fleet, how that fleet's
 * GET /metrics reaches the sum over all of them. Nothing binds it on Workers, in single-process Node or
 * in in-process tests, so their fleets expose their own registry.
 *
 * It is process-wide (not passed in) because the fleet is assembled by code that has no say in how the
 * process is deployed; a Platform field would carry it just as well (see the README's Operating notes).
 */
import type { RegistrySnapshot } from './snapshot.ts';

/** What a source needs of the process's own metrics (a FleetMetrics): its figures, to hand the primary. */
export interface LocalMetrics {
  snapshot(): RegistrySnapshot;
}

type Source = (local: LocalMetrics) => () => Promise<string>;
let bound: Source | undefined;

/** Bind (or with undefined, unbind) the source every FleetMetrics built afterwards in this process uses. */
export function bindProcessMetrics(source: Source | undefined): void {
  bound = source;
}

export function processMetricsSource(): Source | undefined {
  return bound;
}

/**
 * A count the runtime keeps for the whole process (Node: how its upstream watch connections were opened),
 * per value of its one label, since the process started: every fleet built after it is bound exposes it
 * as a counter, read when /metrics is asked (the runtime counts in a plain field; nothing on its hot path).
 */
export interface RuntimeCounter {
  name: string;
  help: string;
  label: string;
  read(): Readonly<Record<string, number>>;
}

let runtime: readonly RuntimeCounter[] = [];

/** Bind the runtime's counters (the Node server's, before it builds its fleet). */
export function bindRuntimeCounters(counters: readonly RuntimeCounter[]): void {
  runtime = counters;
}

export function runtimeCounters(): readonly RuntimeCounter[] {
  return runtime;
}
