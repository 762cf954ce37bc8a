/**
 * Where complete answers are kept: in memory per process (Node) or isolate (Workers), and on Workers also
 * in the location's Cache API (src/platform/cache.ts implements {@link EdgeStore}). Entries are plain
 * data (status, headers, bytes), never a stream or a pending promise: on Workers one isolate serves many
 * requests, and a request must not touch an I/O object another request created.
 */

export interface StoredAnswer {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array;
  /** when the answer was read from the cluster (epoch ms): `Age` for whoever gets it later */
  storedAt: number;
}

/** The runtime's shared cache (Workers: `caches.default`, per location), keyed by an opaque hex key. */
export interface EdgeStore {
  get(key: string): Promise<StoredAnswer | undefined>;
  put(key: string, answer: StoredAnswer, ttlSeconds: number): Promise<void>;
}

export function answerBytes(a: StoredAnswer): number {
  let n = a.body.length + 64;
  for (const [k, v] of a.headers) n += k.length + v.length;
  return n;
}

/**
 * A byte-bounded map whose entries expire. When full, the entry used longest ago goes first (a hit moves
 * an entry to the back). One answer larger than a quarter of the bound is never kept: a single huge list
 * would otherwise evict everything else for one TTL.
 */
export class MemoryStore {
  private readonly entries = new Map<string, { until: number; answer: StoredAnswer; bytes: number }>();
  private used = 0;

  constructor(
    private readonly ttlMs: number,
    readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The largest answer this store keeps. */
  get entryLimit(): number {
    return Math.floor(this.maxBytes / 4);
  }

  get(key: string): StoredAnswer | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (this.now() >= e.until) {
      this.drop(key);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.answer;
  }

  set(key: string, answer: StoredAnswer): boolean {
    if (this.ttlMs <= 0) return false;
    const bytes = answerBytes(answer);
    if (bytes > this.entryLimit) return false;
    this.drop(key);
    this.entries.set(key, { until: answer.storedAt + this.ttlMs, answer, bytes });
    this.used += bytes;
    while (this.used > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.drop(oldest.value);
    }
    return true;
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.used -= e.bytes;
  }
}
