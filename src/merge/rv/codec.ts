/**
 * Composite resourceVersion: one RV per cluster, packed into one RV the fleet can hand to clients.
 *
 * FORMAT (v1). `M` = the membership: the cluster names, sorted by UTF-16 code unit and de-duplicated.
 * `D` = 9 decimal digits: a 53-bit synchronous hash of M (names joined by "\n") modulo 10^9, zero-padded.
 *
 *   Integer form, used when every member RV is a canonical decimal (`0` or `[1-9][0-9]*`, ≤ 99 digits)
 *   or unknown (""):
 *
 *     "1" D { LL RV }*          one entry per cluster of M, in M's order
 *
 *   where LL is the RV's length as two decimal digits (00 = this cluster's RV is unknown: down, skipped,
 *   or not yet listed) and RV its digits. Example, M = [member1, member2], RVs 12345 and 987:
 *   "1" + "936789192" + "05" "12345" + "03" "987"  →  "1936789192051234503987".
 *   The result is always `[1-9][0-9]*`: a Kubernetes 1.35 comparable RV (KEP-5504).
 *
 *   Opaque form, used as soon as one member RV is not such a decimal (aggregated APIs, non-etcd storage):
 *
 *     "F1" base64url(UTF-8(JSON.stringify([D, RV_1, …, RV_n])))    (no padding)
 *
 *   It is never all digits, so clients that compare RVs see it as "not comparable", as they should.
 *
 *   Single form, the integer form of a vector with at most one known entry when M has two clusters or
 *   more (what one object of one cluster carries: a GET's or a write's answer, a list's items):
 *
 *     "2" D                     no entry known
 *     "2" D K I LL RV           cluster I of M (K = I's digit count, 1–9; I without leading zeros) at RV
 *
 *   Its length does not grow with the number of clusters. The full integer form of such a vector (what
 *   fleets before it emitted for single objects) still decodes; the fleet never emits it.
 *
 * MONOTONICITY (integer and single forms, same membership), under apimachinery `CompareResourceVersion`
 * (longer is greater; equal lengths compare lexically). Let v ≤ w componentwise (numerically, "" lowest),
 * v ≠ w; k(x) = the number of known entries of x, so k(v) ≤ k(w).
 * (a) k(v), k(w) ≥ 2, both in the full form: a larger canonical decimal is never shorter, so every entry
 * of w is at least as long as v's: len(enc(w)) ≥ len(enc(v)). If some entry is longer, enc(w) is longer,
 * hence greater. Otherwise every entry has the same length, both strings have the same layout, the prefix
 * "1" D is shared, and the first differing character lies inside the first cluster whose RV differs,
 * where w's digits are lexically greater (equal-length canonical decimals compare lexically like numbers).
 * (b) k(w) ≤ 1, both single: k(v) = 0 gives "2" D, shorter than any single form with an entry; else both
 * know the same cluster, share "2" D K I, and compare by LL RV as in (a).
 * (c) k(v) ≤ 1 < k(w): len(enc(v)) ≤ 13 + digits(n − 1) + len(v_i) while len(enc(w)) = 10 + 2n + Σ
 * len(w_j) ≥ 11 + 2n + len(v_i) (w knows v's cluster with an RV at least as long, and one more), and
 * digits(n − 1) + 2 < 2n for n ≥ 2: enc(v) is shorter, hence smaller. So enc(v) < enc(w). ∎
 * Property-tested in rv.test.ts (rv.ts re-exports this file; the parameter semantics are there).
 *
 * MEMBERSHIP. Decoding needs the current membership: the entry count parsed from the string and the digest
 * D must both match it, so a composite made for {a,b,c} never decodes for {a,b} or {a,b,d} (digest
 * collision odds 1e-9). Decoding is stateless and strict: a string decodes as `ok` only if encoding the
 * decoded RVs gives back exactly that string.
 *
 * SIZE. Integer form: 10 + Σ(2 + digits). 50 clusters with 10-digit RVs: 610 characters. Single form:
 * 13 + digits(index) + digits(RV), whatever the number of clusters.
 */

import { isWellFormedResourceVersion } from '../../kube/resourceversion.ts';
import { base64urlDecode, base64urlEncode } from '../../util/base64.ts';

const textEncoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

// ---------------------------------------------------------------------------------------------
// membership

/** A membership prepared once (sorted, de-duplicated, digested): pass it instead of a name array on hot paths. */
export interface Membership {
  readonly names: readonly string[];
  /** 9 decimal digits. */
  readonly digest: string;
}

const prepared = new WeakSet<object>();

/** Sorts and de-duplicates the names and computes their digest. */
export function prepareMembership(names: Iterable<string>): Membership {
  const sorted = [...new Set(names)].sort();
  const m: Membership = Object.freeze({ names: Object.freeze(sorted), digest: membershipDigest(sorted) });
  prepared.add(m);
  return m;
}

/**
 * Where `name` is in sorted `names` (-1: not there), by halving: a merged list asks once per cluster, and
 * indexOf made that a walk of the membership each (1,000 clusters: 500,000 string comparisons an answer).
 */
function sortedIndexOf(names: readonly string[], name: string): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (names[mid]! < name) lo = mid + 1;
    else hi = mid;
  }
  return lo < names.length && names[lo] === name ? lo : -1;
}

/** A prepared membership as is, or a name array prepared now. */
export function asMembership(m: readonly string[] | Membership): Membership {
  if (prepared.has(m)) return m as Membership;
  return prepareMembership(m as readonly string[]);
}

/** 9-digit digest of already sorted names (53-bit cyrb53-style hash, mod 10^9). */
export function membershipDigest(sortedNames: readonly string[]): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let k = 0; k < sortedNames.length; k++) {
    const s = sortedNames[k]!;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    h1 = Math.imul(h1 ^ 10, 2654435761);
    h2 = Math.imul(h2 ^ 10, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const h = 4294967296 * (2097151 & h2) + (h1 >>> 0);
  return String(h % 1_000_000_000).padStart(9, '0');
}

// ---------------------------------------------------------------------------------------------
// composite codec

const DIGEST_LEN = 9;
const OPAQUE_PREFIX = 'F1';
const SINGLE_PREFIX = '2';

/** Canonical decimal member RV: `0` or `[1-9][0-9]*`, at most 99 digits. */
function isMemberDecimal(s: string): boolean {
  const n = s.length;
  if (n === 0 || n > 99) return false;
  if (n === 1) {
    const c = s.charCodeAt(0);
    return c >= 0x30 && c <= 0x39;
  }
  return isWellFormedResourceVersion(s);
}

/**
 * Packs one RV per cluster. Clusters of the membership missing from `rvs` (or mapped to "") are encoded
 * as unknown; keys of `rvs` outside the membership are ignored.
 */
export function encodeComposite(
  membership: readonly string[] | Membership,
  rvs: ReadonlyMap<string, string>,
): string {
  const m = asMembership(membership);
  const names = m.names;
  let integer = true;
  for (let i = 0; i < names.length; i++) {
    const rv = rvs.get(names[i]!);
    if (rv !== undefined && rv !== '' && !isMemberDecimal(rv)) {
      integer = false;
      break;
    }
  }
  if (integer) {
    if (names.length >= 2) {
      let known = -1;
      for (let i = 0; i < names.length; i++) {
        if (!rvs.get(names[i]!)) continue;
        if (known >= 0) return encodeFull(m, rvs);
        known = i;
      }
      return known < 0 ? SINGLE_PREFIX + m.digest : encodeSingle(m, known, rvs.get(names[known]!)!);
    }
    return encodeFull(m, rvs);
  }
  const arr: string[] = [m.digest];
  for (let i = 0; i < names.length; i++) arr.push(rvs.get(names[i]!) ?? '');
  return OPAQUE_PREFIX + base64urlEncode(textEncoder.encode(JSON.stringify(arr)));
}

/** the integer form with every entry (also the one fleets before the single form emitted for every vector) */
export function encodeCompositeFull(
  membership: readonly string[] | Membership,
  rvs: ReadonlyMap<string, string>,
): string {
  const m = asMembership(membership);
  let out = '1' + m.digest;
  for (const c of m.names) {
    const rv = rvs.get(c) ?? '';
    const n = rv.length;
    out += (n < 10 ? '0' : '') + n + rv;
  }
  return out;
}

const encodeFull = encodeCompositeFull;

/** the single form: cluster `at` of `m` at `rv` (a canonical decimal), no other entry known */
function encodeSingle(m: Membership, at: number, rv: string): string {
  const i = String(at);
  return `${SINGLE_PREFIX}${m.digest}${i.length}${i}${rv.length < 10 ? '0' : ''}${rv.length}${rv}`;
}

/**
 * A composite-RV splicer (compositeWith). `head` and `tail`, when it has them, say what it answers for an
 * own RV that is a member decimal (one to 99 ASCII digits, no leading zero but "0" itself,
 * {@link isMemberDecimalBytes}): the head, the RV's length in two digits, the RV, then the tail, so a
 * writer may put it together from the item's bytes without decoding the RV or building a string (a
 * merged watch writes every event's RV so). `singleHead`: the head when it is the single form's (tail "").
 */
export type Splicer = ((own: string) => string) & {
  readonly head?: string;
  readonly tail?: string;
  readonly singleHead?: string;
};

/** isMemberDecimal of the ASCII bytes `b[from..to)` */
export function isMemberDecimalBytes(b: Uint8Array, from: number, to: number): boolean {
  const n = to - from;
  if (n <= 0 || n > 99) return false;
  const c0 = b[from]!;
  if (c0 < 0x30 || c0 > 0x39 || (c0 === 0x30 && n > 1)) return false;
  for (let k = from + 1; k < to; k++) {
    const c = b[k]!;
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * The composite for objects of one cluster: `base` with `cluster`'s entry replaced by the object's own RV.
 * Every item of a merged list or watch event needs one, so the parts around the cluster's entry are built
 * once (integer form) and each call only splices the object's RV in.
 */
export function compositeWith(
  membership: readonly string[] | Membership,
  base: ReadonlyMap<string, string>,
  cluster: string,
): Splicer {
  const m = asMembership(membership);
  const at = sortedIndexOf(m.names, cluster);
  const withOwn = (own: string) => encodeComposite(m, new Map(base).set(cluster, own));
  if (at < 0) return withOwn;
  let othersKnown = 0;
  // a list's items know no other entry (base empty): no walk of the membership per cluster, which made
  // a 200-cluster answer's splicers 40,000 lookups
  if (base.size > 0)
    for (const c of m.names) {
      const rv = base.get(c);
      if (c === cluster || rv === undefined || rv === '') continue;
      if (!isMemberDecimal(rv)) return withOwn;
      othersKnown++;
    }
  if (othersKnown === 0 && m.names.length >= 2) {
    // the single form: the object's own RV alone (a GET's answer, a list's items)
    const head = `${SINGLE_PREFIX}${m.digest}${String(at).length}${at}`;
    const single: Splicer = (own) =>
      isMemberDecimal(own) ? `${head}${own.length < 10 ? '0' : ''}${own.length}${own}` : withOwn(own);
    return Object.assign(single, { head, tail: '', singleHead: head });
  }
  let prefix = '1' + m.digest;
  let suffix = '';
  m.names.forEach((c, i) => {
    if (i === at) return;
    const rv = base.get(c) ?? '';
    const entry = (rv.length < 10 ? '0' : '') + rv.length + rv;
    if (i < at) prefix += entry;
    else suffix += entry;
  });
  // own "" with one other known entry is a single form: encodeComposite decides
  const full: Splicer = (own) =>
    isMemberDecimal(own) || (own === '' && othersKnown >= 2)
      ? `${prefix}${own.length < 10 ? '0' : ''}${own.length}${own}${suffix}`
      : withOwn(own);
  return Object.assign(full, { head: prefix, tail: suffix });
}

export type DecodeCompositeResult =
  | { ok: true; rvs: Map<string, string> }
  | { ok: false; reason: 'malformed' | 'membership' };

const MALFORMED = Object.freeze({ ok: false, reason: 'malformed' } as const);
const MEMBERSHIP = Object.freeze({ ok: false, reason: 'membership' } as const);

interface Parsed {
  digest: string;
  /** every entry (full and opaque forms) */
  rvs?: string[];
  /** the single form: the known entry's index (-1: none) and RV */
  single?: { at: number; rv: string };
}

/** the single form after its prefix: "" or K I LL RV, canonical */
function parseSingle(s: string, p: number): Parsed['single'] {
  const n = s.length;
  if (p === n) return { at: -1, rv: '' };
  const k = s.charCodeAt(p) - 0x30;
  if (k < 1 || k > 9 || p + 1 + k + 2 > n) return undefined;
  const idx = s.slice(p + 1, p + 1 + k);
  if (idx.length > 1 && idx.charCodeAt(0) === 0x30) return undefined;
  p += 1 + k;
  const len = (s.charCodeAt(p) - 0x30) * 10 + (s.charCodeAt(p + 1) - 0x30);
  const rv = s.slice(p + 2);
  if (len === 0 || rv.length !== len || !isMemberDecimal(rv)) return undefined;
  return { at: Number(idx), rv };
}

/** Parses without a membership; undefined when the string is not a composite at all. */
function parseComposite(s: string): Parsed | undefined {
  if (typeof s !== 'string') return undefined;
  const n = s.length;
  const first = s.charCodeAt(0);
  if (n >= 1 + DIGEST_LEN && (first === 0x31 || first === 0x32)) {
    for (let i = 1; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x30 || c > 0x39) return undefined;
    }
    if (first === 0x32) {
      const single = parseSingle(s, 1 + DIGEST_LEN);
      return single && { digest: s.slice(1, 1 + DIGEST_LEN), single };
    }
    const rvs: string[] = [];
    let p = 1 + DIGEST_LEN;
    while (p < n) {
      if (p + 2 > n) return undefined;
      const len = (s.charCodeAt(p) - 0x30) * 10 + (s.charCodeAt(p + 1) - 0x30);
      p += 2;
      if (p + len > n) return undefined;
      if (len > 1 && s.charCodeAt(p) === 0x30) return undefined; // leading zero: never encoded
      rvs.push(s.slice(p, p + len));
      p += len;
    }
    return { digest: s.slice(1, 1 + DIGEST_LEN), rvs };
  }
  if (s.startsWith(OPAQUE_PREFIX)) {
    const bytes = base64urlDecode(s.slice(OPAQUE_PREFIX.length));
    if (!bytes) return undefined;
    let arr: unknown;
    try {
      arr = JSON.parse(strictDecoder.decode(bytes));
    } catch {
      return undefined;
    }
    if (!Array.isArray(arr) || arr.length < 1) return undefined;
    for (const x of arr) if (typeof x !== 'string') return undefined;
    const digest = arr[0] as string;
    if (!/^[0-9]{9}$/.test(digest)) return undefined;
    const rvs = arr.slice(1) as string[];
    // canonical: only strings the encoder would have produced
    let integer = true;
    for (const rv of rvs) {
      if (rv !== '' && !isMemberDecimal(rv)) {
        integer = false;
        break;
      }
    }
    if (integer) return undefined;
    const again = OPAQUE_PREFIX + base64urlEncode(textEncoder.encode(JSON.stringify(arr)));
    if (again !== s) return undefined;
    return { digest, rvs };
  }
  return undefined;
}

/**
 * Unpacks a composite for the given (current) membership. `membership` when the string is a well-formed
 * composite made for another set of clusters; `malformed` when it is no composite at all. Never throws.
 */
export function decodeComposite(
  s: string,
  membership: readonly string[] | Membership,
): DecodeCompositeResult {
  const p = parseComposite(s);
  if (!p) return MALFORMED;
  const m = asMembership(membership);
  if (p.digest !== m.digest) return MEMBERSHIP;
  const rvs = new Map<string, string>();
  if (p.single) {
    // made only for two clusters or more, for a cluster of the membership
    if (m.names.length < 2 || p.single.at >= m.names.length) return MEMBERSHIP;
    for (let i = 0; i < m.names.length; i++) rvs.set(m.names[i]!, i === p.single.at ? p.single.rv : '');
    return { ok: true, rvs };
  }
  if (p.rvs!.length !== m.names.length) return MEMBERSHIP;
  for (let i = 0; i < m.names.length; i++) rvs.set(m.names[i]!, p.rvs![i]!);
  return { ok: true, rvs };
}

/**
 * Heuristic: does `s` look like a fleet composite (of any membership)? A plain upstream RV of 10+ digits
 * starting with 1 can look like one; use {@link decodeComposite} with the membership to be sure.
 */
export function isFleetComposite(s: string): boolean {
  return parseComposite(s) !== undefined;
}
