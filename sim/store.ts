/**
 * The simulated cluster's etcd: one resourceVersion counter for every resource, a version history per
 * key (so paged lists continue at the snapshot they started from, like etcd MVCC), a watch event log,
 * and compaction (explicit, and by age like kube-apiserver's periodic etcd compaction).
 *
 * Keys are `<namespace>/<name>` (`/<name>` for cluster-scoped objects): sorting them gives etcd's order.
 */

import type { KubeObject } from './catalog/types.ts';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  rv: number;
  /** `<group>/<resource>` */
  gr: string;
  key: string;
  obj: KubeObject;
  /** state before this write (MODIFIED / DELETED) */
  prev?: KubeObject;
  time: number;
}

interface Version {
  rv: number;
  obj: KubeObject | null; // null: deleted at rv
}

export type Listener = (ev: StoreEvent) => void;

export function grKey(group: string, resource: string): string {
  return `${group}/${resource}`;
}

export function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

export function clone<T>(x: T): T {
  return structuredClone(x);
}

export class Store {
  private rev: number;
  private compacted: number;
  private readonly tables = new Map<string, Map<string, Version[]>>();
  private events: StoreEvent[] = [];
  /** by `gr`, or by `gr` and namespace (`<gr>\n<namespace>`) for a namespaced watch */
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly anyListeners = new Set<Listener>();

  constructor(
    private readonly clock: () => number,
    private readonly historyTtlMs: number,
    startRv = 1,
  ) {
    this.rev = startRv;
    this.compacted = startRv;
  }

  get resourceVersion(): number {
    return this.rev;
  }

  /** Oldest RV still readable: lists/watches from before it get 410 Expired. */
  get compactedRevision(): number {
    this.autoCompact();
    return this.compacted;
  }

  private table(gr: string): Map<string, Version[]> {
    let t = this.tables.get(gr);
    if (!t) {
      t = new Map();
      this.tables.set(gr, t);
    }
    return t;
  }

  /** Every `<group>/<resource>` that ever held an object. */
  resources(): string[] {
    return [...this.tables.keys()];
  }

  get(gr: string, key: string): KubeObject | undefined {
    const vs = this.tables.get(gr)?.get(key);
    const last = vs?.[vs.length - 1];
    return last?.obj ? clone(last.obj) : undefined;
  }

  /** Objects at `rv` (default: now), sorted by key, optionally within one namespace. Not cloned: callers must not mutate. */
  snapshot(gr: string, rv = this.rev, namespace?: string): Array<{ key: string; obj: KubeObject }> {
    const t = this.tables.get(gr);
    if (!t) return [];
    const prefix = namespace !== undefined ? `${namespace}/` : undefined;
    const out: Array<{ key: string; obj: KubeObject }> = [];
    for (const [key, vs] of t) {
      if (prefix && !key.startsWith(prefix)) continue;
      let v: Version | undefined;
      for (let i = vs.length - 1; i >= 0; i--) {
        if (vs[i]!.rv <= rv) {
          v = vs[i];
          break;
        }
      }
      if (v?.obj) out.push({ key, obj: v.obj });
    }
    out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return out;
  }

  list(gr: string, namespace?: string): KubeObject[] {
    return this.snapshot(gr, this.rev, namespace).map((e) => clone(e.obj));
  }

  /** Write an object (create or replace); assigns the next RV into metadata.resourceVersion. */
  put(gr: string, key: string, obj: KubeObject): KubeObject {
    const prev = this.get(gr, key);
    const rv = ++this.rev;
    const stored = clone(obj);
    stored.metadata.resourceVersion = String(rv);
    const vs = this.table(gr).get(key) ?? [];
    vs.push({ rv, obj: stored });
    this.table(gr).set(key, vs);
    const ev: StoreEvent = {
      type: prev ? 'MODIFIED' : 'ADDED',
      rv,
      gr,
      key,
      obj: stored,
      time: this.clock(),
    };
    if (prev) ev.prev = prev;
    this.record(ev);
    return clone(stored);
  }

  /** Delete; the DELETED event's object carries the deletion's RV, as etcd's watch does. */
  delete(gr: string, key: string): KubeObject | undefined {
    const prev = this.get(gr, key);
    if (!prev) return undefined;
    const rv = ++this.rev;
    const gone = clone(prev);
    gone.metadata.resourceVersion = String(rv);
    this.table(gr).get(key)!.push({ rv, obj: null });
    this.record({ type: 'DELETED', rv, gr, key, obj: gone, prev, time: this.clock() });
    return clone(gone);
  }

  private record(ev: StoreEvent): void {
    this.events.push(ev);
    this.autoCompact();
    for (const l of [...(this.listeners.get(ev.gr) ?? [])]) l(ev);
    // an object's namespace never changes, so a namespaced watch hears only its own namespace's events:
    // 10,000 watches of as many namespaces cost one listener call per event, not 10,000
    const ns = ev.obj.metadata.namespace;
    if (ns !== undefined) for (const l of [...(this.listeners.get(`${ev.gr}\n${ns}`) ?? [])]) l(ev);
    for (const l of [...this.anyListeners]) l(ev);
  }

  /** Events of one resource after `rv`, oldest first. Caller checks `rv >= compactedRevision` first. */
  eventsSince(gr: string, rv: number): StoreEvent[] {
    return this.events.filter((e) => e.gr === gr && e.rv > rv);
  }

  /**
   * `l` hears every event of `gr` ('*': of every resource), or with `namespace` only those of objects in
   * that namespace.
   */
  subscribe(gr: string | '*', l: Listener, namespace?: string): () => void {
    if (gr === '*') {
      this.anyListeners.add(l);
      return () => this.anyListeners.delete(l);
    }
    const at = namespace === undefined ? gr : `${gr}\n${namespace}`;
    let s = this.listeners.get(at);
    if (!s) {
      s = new Set();
      this.listeners.set(at, s);
    }
    s.add(l);
    return () => {
      s.delete(l);
      if (s.size === 0 && this.listeners.get(at) === s) this.listeners.delete(at);
    };
  }

  /** Forget history up to now. */
  compact(upTo = this.rev): void {
    if (upTo <= this.compacted) return;
    this.compacted = upTo;
    this.events = this.events.filter((e) => e.rv > upTo);
    for (const t of this.tables.values()) {
      for (const [key, vs] of t) {
        let keepFrom = 0;
        for (let i = vs.length - 1; i >= 0; i--) {
          if (vs[i]!.rv <= upTo) {
            keepFrom = i;
            break;
          }
        }
        const kept = vs.slice(keepFrom);
        if (kept.length === 1 && kept[0]!.obj === null) t.delete(key);
        else t.set(key, kept);
      }
    }
  }

  /** Compact what is older than the TTL, like the apiserver's periodic etcd compaction. */
  private autoCompact(): void {
    const limit = this.clock() - this.historyTtlMs;
    let upTo = 0;
    for (const e of this.events) {
      if (e.time >= limit) break;
      upTo = e.rv;
    }
    // bound memory too: keep at most 20k events of history
    if (this.events.length > 20_000) upTo = Math.max(upTo, this.events[this.events.length - 20_000]!.rv);
    if (upTo > this.compacted) this.compact(upTo);
  }
}
