/**
 * A composite RV kept as its integer form's bytes, entry by entry, for a stream whose entries change one
 * at a time (a merged watch): an entry that keeps its length is rewritten where it lies, and a cluster's
 * splicer (codec.ts compositeWith) is a pair of views around its entry, so an event costs no walk of the
 * membership. Every answer is what codec.ts answers for the same entries (property-tested, live.test.ts).
 */

import { compositeWith, encodeComposite, type Membership, type Splicer } from './codec.ts';

const ascii = new TextDecoder();

/**
 * a full-form splicer whose head and tail are views of the live bytes (valid while the layout stays); it
 * has no `head` and `tail` strings (a caller without spliceBytes leaves every RV to the function)
 */
export type LiveSplicer = Splicer & { readonly headBytes: Uint8Array; readonly tailBytes: Uint8Array };

const isDecimal = (rv: string): boolean => {
  const n = rv.length;
  if (n === 0 || n > 99) return false;
  const c0 = rv.charCodeAt(0);
  if (c0 < 0x30 || c0 > 0x39 || (c0 === 0x30 && n > 1)) return false;
  for (let k = 1; k < n; k++) {
    const c = rv.charCodeAt(k);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
};

export class LiveComposite {
  private readonly index = new Map<string, number>();
  /** `1` D then each entry (two-digit length, digits); entries not decimal are written as unknown */
  private buf: Uint8Array;
  /** where entry i starts; off[n]: the end */
  private readonly off: Int32Array;
  private readonly rvs: string[];
  /** entries known ("" is not), and known but not a member decimal (opaque form: codec.ts answers) */
  private known = 0;
  private odd = 0;
  /** bumped whenever an entry moves: splicers of an older layout are rebuilt */
  private layout = 0;
  private readonly splicers: Array<{ layout: number; s: Splicer } | undefined>;

  constructor(
    readonly membership: Membership,
    rvs: ReadonlyMap<string, string>,
  ) {
    const names = membership.names;
    const n = names.length;
    this.off = new Int32Array(n + 1);
    this.rvs = new Array<string>(n).fill('');
    this.splicers = new Array(n).fill(undefined);
    this.buf = new Uint8Array(10 + 2 * n + 16 * n);
    this.buf[0] = 0x31;
    for (let k = 0; k < 9; k++) this.buf[1 + k] = membership.digest.charCodeAt(k);
    for (let i = 0; i < n; i++) {
      this.index.set(names[i]!, i);
      this.off[i] = 10 + 2 * i;
      this.buf[10 + 2 * i] = 0x30;
      this.buf[11 + 2 * i] = 0x30;
    }
    this.off[n] = 10 + 2 * n;
    for (let i = 0; i < n; i++) {
      const rv = rvs.get(names[i]!);
      if (rv) this.set(names[i]!, rv);
    }
  }

  /** `cluster`'s entry becomes `rv` (a cluster outside the membership is ignored, as the codec ignores it) */
  set(cluster: string, rv: string): void {
    const i = this.index.get(cluster);
    if (i === undefined) return;
    const old = this.rvs[i]!;
    if (old === rv) return;
    this.rvs[i] = rv;
    this.known += (rv !== '' ? 1 : 0) - (old !== '' ? 1 : 0);
    const wasOdd = old !== '' && !isDecimal(old);
    const isOdd = rv !== '' && !isDecimal(rv);
    this.odd += (isOdd ? 1 : 0) - (wasOdd ? 1 : 0);
    const digits = isOdd ? '' : rv;
    const from = this.off[i]!;
    const len = digits.length;
    const delta = len + 2 - (this.off[i + 1]! - from);
    if (delta !== 0) this.move(i, delta);
    // an entry becomes known, unknown or odd: the forms the splicers answer in may change
    else if (old === '' || rv === '' || wasOdd || isOdd) this.layout++;
    const b = this.buf;
    b[from] = 0x30 + ((len / 10) | 0);
    b[from + 1] = 0x30 + (len % 10);
    for (let k = 0; k < len; k++) b[from + 2 + k] = digits.charCodeAt(k);
  }

  /** the entries after entry i move by `delta` bytes (a new layout: every splicer is rebuilt) */
  private move(i: number, delta: number): void {
    const n = this.rvs.length;
    const end = this.off[n]!;
    if (end + delta > this.buf.length) {
      const grown = new Uint8Array(Math.max(this.buf.length * 2, end + delta));
      grown.set(this.buf.subarray(0, end));
      this.buf = grown;
    }
    this.buf.copyWithin(this.off[i + 1]! + delta, this.off[i + 1]!, end);
    for (let j = i + 1; j <= n; j++) this.off[j]! += delta;
    this.layout++;
  }

  get(cluster: string): string {
    const i = this.index.get(cluster);
    return i === undefined ? '' : this.rvs[i]!;
  }

  /** the RVs by cluster (what the codec's functions take) */
  private map(): Map<string, string> {
    const m = new Map<string, string>();
    const names = this.membership.names;
    for (let i = 0; i < names.length; i++) m.set(names[i]!, this.rvs[i]!);
    return m;
  }

  /** encodeComposite of the entries */
  encode(): string {
    if (this.odd > 0 || (this.rvs.length >= 2 && this.known <= 1))
      return encodeComposite(this.membership, this.map());
    return ascii.decode(this.buf.subarray(0, this.off[this.rvs.length]!));
  }

  /**
   * compositeWith(membership, entries, cluster), answering for the entries as they are when called: the
   * splicer of a cluster is kept while the layout stays (an entry rewritten in place is read by its views).
   */
  splicer(cluster: string): Splicer {
    const i = this.index.get(cluster);
    const n = this.rvs.length;
    const own = i === undefined ? '' : this.rvs[i]!;
    const othersOdd = this.odd - (own !== '' && !isDecimal(own) ? 1 : 0);
    const othersKnown = this.known - (own !== '' ? 1 : 0);
    // outside the membership or another entry not decimal (the opaque form, rare): as the codec makes it;
    // the single form (no other entry known): as the codec makes it, kept (its head names the cluster only)
    if (i === undefined || othersOdd > 0) return compositeWith(this.membership, this.map(), cluster);
    if (othersKnown === 0 || n < 2) {
      const kept = this.splicers[i];
      if (kept && kept.layout === this.layout) return kept.s;
      const s = compositeWith(this.membership, this.map(), cluster);
      this.splicers[i] = { layout: this.layout, s };
      return s;
    }
    const kept = this.splicers[i];
    if (kept && kept.layout === this.layout) return kept.s;
    const s = this.full(i);
    this.splicers[i] = { layout: this.layout, s };
    return s;
  }

  private full(i: number): LiveSplicer {
    const headBytes = this.buf.subarray(0, this.off[i]!);
    const tailBytes = this.buf.subarray(this.off[i + 1]!, this.off[this.rvs.length]!);
    const cluster = this.membership.names[i]!;
    // the head and tail as views only, assigned: Object.defineProperties (views plus string getters) on
    // each splicer cost ~6 µs, one per merged watch and cluster at its first event (merged-watch's burst);
    // the function an argument, not a named const: a keepNames build (tsx) names those by defineProperty
    return withViews(
      (own: string): string => {
        // own "" with one other known entry is a single form: the codec decides (as compositeWith)
        if (isDecimal(own) || (own === '' && this.known - (this.rvs[i] !== '' ? 1 : 0) >= 2))
          return `${ascii.decode(headBytes)}${own.length < 10 ? '0' : ''}${own.length}${own}${ascii.decode(tailBytes)}`;
        return encodeComposite(this.membership, this.map().set(cluster, own));
      },
      headBytes,
      tailBytes,
    );
  }
}

function withViews(fn: Splicer, headBytes: Uint8Array, tailBytes: Uint8Array): LiveSplicer {
  const s = fn as LiveSplicer & { headBytes: Uint8Array; tailBytes: Uint8Array };
  s.headBytes = headBytes;
  s.tailBytes = tailBytes;
  return s;
}

/** the splicer's head and tail as bytes, when it keeps them so (LiveComposite's full form) */
export function spliceBytes(s: Splicer): { headBytes: Uint8Array; tailBytes: Uint8Array } | undefined {
  return (s as Partial<LiveSplicer>).headBytes ? (s as LiveSplicer) : undefined;
}
