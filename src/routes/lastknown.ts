/**
 * Each cluster's aggregated discovery as last seen (`/api` and `/apis`), kept per process (per isolate on
 * Workers) so that a cluster that cannot be asked still has its APIs listed: marked `Stale` in aggregated
 * discovery, as they were in legacy discovery (src/merge/lastknown.ts converts). The fleet is stateless
 * and this is a cache: empty after a restart, bounded (entries and bytes, least recently used out
 * first), keyed by the clusters' caller as the merged documents are (src/plan/discovery.ts). A cluster
 * that cannot be asked and was never seen here is left out with a Warning that says so.
 *
 * Not a route: the discovery route imports it; it imports no route.
 */
import type { APIGroupDiscovery } from '../kube/discovery.ts';
import { type CallerKey, discoveryCacheKey } from '../plan/discovery.ts';
import type { FleetDeps } from '../types.ts';
import type { Got } from './gather.ts';

const MAX_ENTRIES = 256;
const MAX_BYTES = 16 * 1024 * 1024;

interface Kept {
  items: APIGroupDiscovery[];
  bytes: number;
  at: number;
}

class LastKnown {
  private readonly entries = new Map<string, Kept>();
  private bytes = 0;

  get(key: string): Kept | undefined {
    const k = this.entries.get(key);
    if (!k) return undefined;
    // most recently used last
    this.entries.delete(key);
    this.entries.set(key, k);
    return k;
  }

  set(key: string, k: Kept): void {
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.bytes;
      this.entries.delete(key);
    }
    if (k.bytes > MAX_BYTES) return;
    this.entries.set(key, k);
    this.bytes += k.bytes;
    for (const [oldest, v] of this.entries) {
      if (this.entries.size <= MAX_ENTRIES && this.bytes <= MAX_BYTES) break;
      this.entries.delete(oldest);
      this.bytes -= v.bytes;
    }
  }
}

// one store per fleet, keyed by its Membership as the merged-document cache is (src/routes/gather.ts)
const stores = new WeakMap<object, LastKnown>();

function storeOf(deps: Pick<FleetDeps, 'membership'>): LastKnown {
  let s = stores.get(deps.membership);
  if (!s) {
    s = new LastKnown();
    stores.set(deps.membership, s);
  }
  return s;
}

/** Where one cluster's kept document lives: the cluster, the caller, `/api` or `/apis`. */
export interface KeptAt {
  deps: Pick<FleetDeps, 'membership'>;
  caller: CallerKey | undefined;
  which: 'api' | 'apis';
}

const keyOf = (at: KeptAt, cluster: string) => discoveryCacheKey([{ cluster }], at.caller, at.which);

/** Keeps what `cluster` just answered (`bytes`: the size of its answer, for the bound). */
export function keep(at: KeptAt, cluster: string, items: APIGroupDiscovery[], bytes: number): void {
  storeOf(at.deps).set(keyOf(at, cluster), { items, bytes, at: Date.now() });
}

/** `cluster`'s kept document and its age in seconds, if this process has one. */
export function recall(
  at: KeptAt,
  cluster: string,
): { items: APIGroupDiscovery[]; ageSeconds: number } | undefined {
  const k = storeOf(at.deps).get(keyOf(at, cluster));
  return k ? { items: k.items, ageSeconds: Math.max(0, Math.round((Date.now() - k.at) / 1000)) } : undefined;
}

type Failed = Extract<Got, { kind: 'failed' }>;

/** A failure that is no answer of the cluster itself (transport, timeout, a proxy's or server's 5xx). */
export function unreachable(g: Got): g is Failed {
  return g.kind === 'failed' && (g.status === undefined || g.status >= 500);
}

/**
 * Each unreachable cluster's answer in `got` replaced by what `derive` makes of its kept document (a
 * body to merge, or undefined when the kept document does not have what was asked: the cluster did not
 * serve it); the others as they were. Returns the new answers and the warnings that explain them: the
 * caller appends them to its warnings (so the answer is partial: never cached, never reused).
 * A cluster with nothing kept stays failed, its reason saying its APIs are not listed.
 */
export function withLastKnown(
  at: KeptAt,
  got: Got[],
  derive: (items: APIGroupDiscovery[]) => { body: string; contentType: string } | undefined,
): { got: Got[]; warnings: string[] } {
  const warnings: string[] = [];
  const out = got.map((g): Got => {
    if (!unreachable(g)) return g;
    const kept = recall(at, g.target.cluster);
    if (!kept)
      return {
        ...g,
        reason: `${g.reason}; its APIs are not listed: this fleet process has not seen its discovery since it started`,
      };
    warnings.push(
      `cluster ${g.target.cluster}: ${g.reason}; its APIs as last seen ${kept.ageSeconds}s ago (marked Stale in aggregated discovery)`,
    );
    const d = derive(kept.items);
    return d ? { target: g.target, kind: 'ok', ...d } : { target: g.target, kind: 'absent' };
  });
  return { got: out, warnings };
}
