/**
 * A bounded map whose entries expire. Only resolved values go in, never a pending promise: on Workers
 * one isolate serves many requests, and a request must not await I/O that another request started.
 * When full, the entry written longest ago goes first (a write moves a key to the back).
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { until: number; value: V }>();

  /**
   * @param ttlMs how long an entry lives; ≤ 0 turns the cache off (every get misses, set keeps nothing)
   * @param max   the most entries held
   * @param now   the clock (tests pass their own)
   */
  constructor(
    readonly ttlMs: number,
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (this.now() >= e.until) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  /**
   * Keeps `value` for the cache's TTL, or until `expiresAt` (epoch ms) if that is sooner: a token's own
   * expiry, say. Nothing is kept when that moment has already passed.
   */
  set(key: string, value: V, expiresAt = Number.POSITIVE_INFINITY): void {
    if (!this.enabled) return;
    const now = this.now();
    const until = Math.min(now + this.ttlMs, expiresAt);
    if (until <= now) return;
    this.entries.delete(key);
    this.entries.set(key, { until, value });
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
