/**
 * Header lists without a Fetch Headers behind them, for the per-request path on Node (issue 16): building
 * an undici Headers costs a validation and a sorted copy per line, and a passthrough request made three
 * (the adapter's request headers once iterated, the headers forwarded upstream, the dispatch's lines).
 * The Node seam installs it (src/platform/node.ts: the upstream client's `useLazyHeaders`; deploy/node/http.ts
 * for the request's own headers); workerd's Headers are the runtime's own, so the worker bundles none of it.
 *
 * {@link PairHeaders} behaves as a Headers for every reader (`get`, `has`, `forEach`, iteration: lowercased
 * names in sorted order, repeated lines combined with ", " and cookies with "; ", each Set-Cookie its own
 * entry, values trimmed of HTTP whitespace) and becomes a real one on the first change. Its prototype is
 * Headers', so `instanceof Headers` holds and `new Headers(it)` copies it; `headerPairs`
 * (src/request/headers.ts) reads its entries without iterating it.
 */
import { headerPairs, headersOf, insertPair, PAIRS, type Pairs, trimValue } from '../request/headers.ts';

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** names readers asked for, checked and lowercased once (the fleet's own reads: a few dozen literals) */
const checkedNames = new Map<string, string>();

function lowerName(name: string): string {
  const known = checkedNames.get(name);
  if (known !== undefined) return known;
  if (!TOKEN.test(name)) throw new TypeError(`Headers: invalid header name "${name}"`);
  const lower = name.toLowerCase();
  // bounded: names a caller chose (a Headers read with a request's own names) are checked each time past it
  if (checkedNames.size < 256) checkedNames.set(name, lower);
  return lower;
}

/**
 * Header lines (name, value, name, value… as sent: any case, repeats on their own lines) as the entries
 * a Headers built from them iterates.
 */
export function combineLines(lines: readonly string[]): Pairs {
  const out: Pairs = [];
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const name = lines[i]!.toLowerCase();
    const value = trimValue(lines[i + 1]!);
    let at = -1;
    if (name !== 'set-cookie')
      for (let j = 0; j < out.length; j += 2)
        if (out[j] === name) {
          at = j;
          break;
        }
    if (at >= 0) out[at + 1] = `${out[at + 1]}${name === 'cookie' ? '; ' : ', '}${value}`;
    // in name order (stable: Set-Cookie lines keep theirs)
    else insertPair(out, name, value);
  }
  return out;
}

/** See the module comment. `lines`: raw lines (combined when first read) or, with `combined`, entries. */
export class PairHeaders {
  #lines: readonly string[];
  #pairs?: Pairs;
  #native?: Headers;

  constructor(lines: readonly string[], combined = false) {
    this.#lines = lines;
    if (combined) this.#pairs = lines as Pairs;
  }

  get #entries(): Pairs {
    if (this.#native) return headerPairs(this.#native);
    this.#pairs ??= combineLines(this.#lines);
    return this.#pairs;
  }

  get #headers(): Headers {
    this.#native ??= headersOf(this.#entries);
    return this.#native;
  }

  [PAIRS](): Pairs {
    return this.#entries;
  }

  get(name: string): string | null {
    if (this.#native) return this.#native.get(name);
    const n = lowerName(name);
    const p = this.#entries;
    let v: string | null = null;
    // Set-Cookie is the one name with several entries: get joins them as Headers does
    for (let i = 0; i < p.length; i += 2) if (p[i] === n) v = v === null ? p[i + 1]! : `${v}, ${p[i + 1]}`;
    return v;
  }
  has(name: string): boolean {
    return this.get(name) !== null;
  }
  getSetCookie(): string[] {
    if (this.#native) return (this.#native as Headers & { getSetCookie(): string[] }).getSetCookie();
    const p = this.#entries;
    const out: string[] = [];
    for (let i = 0; i < p.length; i += 2) if (p[i] === 'set-cookie') out.push(p[i + 1]!);
    return out;
  }
  set(name: string, value: string): void {
    this.#headers.set(name, value);
  }
  append(name: string, value: string): void {
    this.#headers.append(name, value);
  }
  delete(name: string): void {
    this.#headers.delete(name);
  }
  forEach(f: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    const p = this.#entries;
    for (let i = 0; i < p.length; i += 2) f.call(thisArg, p[i + 1]!, p[i]!, this as unknown as Headers);
  }
  *entries(): IterableIterator<[string, string]> {
    const p = this.#entries;
    for (let i = 0; i < p.length; i += 2) yield [p[i]!, p[i + 1]!];
  }
  *keys(): IterableIterator<string> {
    const p = this.#entries;
    for (let i = 0; i < p.length; i += 2) yield p[i]!;
  }
  *values(): IterableIterator<string> {
    const p = this.#entries;
    for (let i = 0; i < p.length; i += 2) yield p[i + 1]!;
  }
  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}
Object.setPrototypeOf(PairHeaders.prototype, Headers.prototype);
