/**
 * Header entries as one flat array, for the per-request path (issue 16): what the upstream client filters
 * and sends, read from any Headers by {@link headerPairs}. On Node a request's headers arrive as a
 * PairHeaders (src/upstreams/pair-headers.ts: a Headers for every reader, built from the lines Node parsed
 * without an undici Headers behind it), whose entries {@link headerPairs} takes without iterating; the
 * worker has the runtime's own Headers and bundles none of that.
 */

/** The combined entries as one flat array: name, value, name, value… (lowercased names, sorted). */
export type Pairs = string[];

/** HTTP whitespace (tab, LF, CR, space) removed at both ends, as Headers normalises a value. */
export function trimValue(v: string): string {
  const ws = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;
  if (v.length === 0 || (!ws(v.charCodeAt(0)) && !ws(v.charCodeAt(v.length - 1)))) return v;
  let a = 0;
  let b = v.length;
  while (a < b && ws(v.charCodeAt(a))) a++;
  while (b > a && ws(v.charCodeAt(b - 1))) b--;
  return v.slice(a, b);
}

/** The method by which a PairHeaders hands over its entries. */
export const PAIRS: unique symbol = Symbol.for('fleet-apiserver.header-pairs');

/** The entries of `h` (lowercased names, sorted, repeats combined): read from a PairHeaders, else iterated. */
export function headerPairs(h: Headers): Pairs {
  const own = (h as { [PAIRS]?: () => Pairs })[PAIRS];
  if (typeof own === 'function') return own.call(h);
  const out: Pairs = [];
  h.forEach((v, k) => {
    out.push(k, v);
  });
  return out;
}

/**
 * `name` (lowercased) added with `value`, in place, keeping the entries in name order: after any it equals
 * (a repeated Set-Cookie line keeps its place), shifting the later entries up.
 */
export function insertPair(p: Pairs, name: string, value: string): void {
  p.push(name, value);
  let j = p.length - 2;
  for (; j > 0 && p[j - 2]! > name; j -= 2) {
    p[j] = p[j - 2]!;
    p[j + 1] = p[j - 1]!;
  }
  p[j] = name;
  p[j + 1] = value;
}

/** Entries as a real Headers (what the platform's fetch and Response take). */
export function headersOf(p: Pairs): Headers {
  const h = new Headers();
  for (let i = 0; i < p.length; i += 2) h.append(p[i]!, p[i + 1]!);
  return h;
}

/** Go's httpguts.ValidHostHeader: the bytes a Host value may hold (RFC 3986 reg-name, IP literal, port). */
const HOST_BYTE = /^[A-Za-z0-9!$%&'()*+,\-.:;=[\]_~]*$/;

/**
 * What Go's net/http answers (before kube-apiserver's handlers run) for the request's Host lines, in its
 * words: none on HTTP/1.1 ("missing required Host header"), more than one ("too many Host headers"), or one
 * with a byte a host cannot hold ("malformed Host header"). Undefined for a good one. Go writes these as a
 * text/plain 400; the fleet says the same in a Status.
 */
export function hostRefusal(hosts: readonly string[], http11: boolean): string | undefined {
  if (hosts.length > 1) return 'too many Host headers';
  if (hosts.length === 0) return http11 ? 'missing required Host header' : undefined;
  return HOST_BYTE.test(hosts[0]!) ? undefined : 'malformed Host header';
}
