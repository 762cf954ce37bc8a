/**
 * Propagation in a merged Table watch (docs/propagation.md): the rows carry the same propagation columns
 * as the list before the watch (list/propagation.ts), so `kubectl get -w` at the root prints one table.
 * The bindings (and their Works) are read at the start, only when a list would read them; they are read
 * again, at most every REFRESH_MS and only while events flow, so a watch follows Karmada's scheduling.
 */
import {
  enrichRow,
  type IncludeObject,
  includeObjectOf,
  mayBePropagated,
  type PropagationIndex,
} from '../plan/propagation.ts';
import type { RequestInfo } from '../request/info.ts';
import type { FanOutDeps } from '../types.ts';
import { readBindings } from '../upstreams/bindings.ts';
import type { Target } from '../upstreams/fanout.ts';

/** how stale the bindings of a flowing watch may get */
export const REFRESH_MS = 10_000;
/** how stale they may get once a copy shows Drifted (it may be the Works that are behind) */
export const DRIFTED_REFRESH_MS = 2_000;
/** a refresh that takes longer is given up (the old bindings stay) */
const READ_TIMEOUT_MS = 10_000;

type Row = Record<string, any>;

export class WatchPropagation {
  private readAt = Date.now();
  private reading = false;

  constructor(
    private index: PropagationIndex,
    private readonly read: (signal: AbortSignal) => Promise<PropagationIndex | undefined>,
    /** what the client asked the rows' objects to be (the clusters are asked for whole objects) */
    readonly include: IncludeObject,
  ) {}

  /** One cluster's row with the propagation cells appended (its object as the client asked for it). */
  row(row: Row, cluster: string): Row {
    const out = enrichRow(this.index, row, cluster, this.include);
    // a copy that looks drifted may be one Karmada just updated past the Works read: read them again soon
    this.refresh(out.cells?.at(-2) === 'Drifted' ? DRIFTED_REFRESH_MS : REFRESH_MS);
    return out;
  }

  private refresh(after: number): void {
    if (this.reading || Date.now() - this.readAt < after) return;
    this.reading = true;
    this.read(AbortSignal.timeout(READ_TIMEOUT_MS))
      .then((next) => {
        // none of the kind any longer: keep the columns (they are sent), with empty cells
        if (next) this.index = next;
      })
      .catch(() => {})
      .finally(() => {
        this.reading = false;
        this.readAt = Date.now();
      });
  }
}

/**
 * The bindings of `info`'s kind and their Works (undefined: the control plane could not say; with
 * `whole`, also when one of the two binding lists could not be read: a refresh keeps what it had).
 */
async function readIndex(
  deps: FanOutDeps,
  karmada: Target,
  info: RequestInfo,
  signal: AbortSignal,
  whole = false,
): Promise<PropagationIndex | undefined> {
  const ask = { namespace: info.namespace, group: info.apiGroup, resource: info.resource, works: true };
  const read = await readBindings(deps, karmada, ask, signal);
  if (whole && read && !read.complete) return undefined;
  await read?.works;
  return read?.index;
}

/**
 * The propagation of a merged Table watch, or undefined when its list would show none (the usual case:
 * the watch then stays as it was, byte for byte).
 */
export async function watchPropagation(
  deps: FanOutDeps,
  info: RequestInfo,
  targets: Target[],
  query: URLSearchParams,
  signal: AbortSignal,
): Promise<WatchPropagation | undefined> {
  const karmada = targets.find((t) => t.controlPlane);
  if (!karmada || !mayBePropagated(info)) return undefined;
  const index = await readIndex(deps, karmada, info, signal).catch(() => undefined);
  if (!index || index.byBinding.size === 0) return undefined;
  return new WatchPropagation(index, (s) => readIndex(deps, karmada, info, s, true), includeObjectOf(query));
}
