/**
 * Content negotiation for the simulated clusters, written from kube-apiserver's behaviour (goautoneg's
 * ParseAccept + apiserver's NegotiateMediaTypeOptions), independent of the fleet's own src/kube/negotiate.ts.
 *
 * - An Accept header is split on `,`; each range is `type/subtype` (or a bare `*`) with `;`-separated
 *   parameters; type, subtype and parameter names are case-insensitive (mime.ParseMediaType lowercases
 *   them), values may be quoted. A range that does not parse is skipped, not an error.
 * - `q` is a parameter of its own (absent: 1; unparseable: 0, as strconv.ParseFloat's zero value). Ranges with
 *   q=0 are "not acceptable" (RFC 9110) and dropped.
 * - Ranges are tried by q (highest first), then concrete type before `*`, concrete subtype before `*`, more
 *   parameters first; ties keep the order sent. kubectl relies on this to get a Table first and a plain
 *   object as the fallback.
 * - The server then walks the ranges and answers with the first one it supports: JSON, YAML (not for
 *   watches), protobuf (only for kinds with a protobuf schema: built-ins, not custom resources), each
 *   optionally `as=Table` / `as=PartialObjectMetadata[List]` in `meta.k8s.io` v1 or v1beta1.
 */

export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** One media range or Content-Type. undefined when it does not parse (no type, bad token, bad parameter). */
export function parseMediaRange(value: string): MediaRange | undefined {
  const parts = splitParams(value);
  const mt = (parts.shift() ?? '').trim().toLowerCase();
  if (mt === '') return undefined;
  const slash = mt.indexOf('/');
  let type: string;
  let subtype: string;
  if (slash < 0) {
    if (mt !== '*') return undefined;
    type = '*';
    subtype = '*';
  } else {
    type = mt.slice(0, slash).trim();
    subtype = mt.slice(slash + 1).trim();
  }
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return undefined;
  const params: Record<string, string> = {};
  let q = 1;
  for (const raw of parts) {
    const p = raw.trim();
    if (p === '') continue; // a trailing `;` is tolerated
    const eq = p.indexOf('=');
    if (eq <= 0) return undefined;
    const k = p.slice(0, eq).trim().toLowerCase();
    let v = p.slice(eq + 1).trim();
    if (!TOKEN.test(k)) return undefined;
    if (v.startsWith('"')) {
      if (v.length < 2 || !v.endsWith('"')) return undefined;
      v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    } else if (!TOKEN.test(v)) return undefined;
    if (k === 'q') {
      const n = /^\s*[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?\s*$/.test(v) ? Number(v) : 0;
      q = Number.isFinite(n) ? n : 0;
    } else params[k] = v;
  }
  return { type, subtype, params, q };
}

/** `;` splits parameters except inside a quoted value. */
function splitParams(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quoted && c === '\\' && i + 1 < s.length) {
      cur += c + s[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

/** The Content-Type of a body: type/subtype lowercased, '' parts when absent or unparseable. */
export function parseMediaType(value: string): MediaRange {
  return parseMediaRange(value) ?? { type: '', subtype: '', params: {}, q: 1 };
}

/** The ranges of an Accept header in the order to try them; an absent or empty header means `*\/*`. */
export function parseAccept(header: string | null | undefined): MediaRange[] {
  if (header === null || header === undefined || header.trim() === '')
    return [{ type: '*', subtype: '*', params: {}, q: 1 }];
  const ranges: { r: MediaRange; i: number }[] = [];
  // commas inside quoted parameter values do not split ranges
  for (const [i, part] of splitOutsideQuotes(header, ',').entries()) {
    const r = parseMediaRange(part);
    if (r && r.q > 0) ranges.push({ r, i });
  }
  const rank = (r: MediaRange) => (r.type === '*' ? 2 : 0) + (r.subtype === '*' ? 1 : 0);
  ranges.sort(
    (a, b) =>
      b.r.q - a.r.q ||
      rank(a.r) - rank(b.r) ||
      Object.keys(b.r.params).length - Object.keys(a.r.params).length ||
      a.i - b.i,
  );
  return ranges.map(({ r }) => r);
}

function splitOutsideQuotes(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const c of s) {
    if (c === '"') quoted = !quoted;
    if (c === sep && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

export type Encoding = 'json' | 'yaml' | 'protobuf';

const SUBTYPES: Record<string, Encoding> = {
  json: 'json',
  yaml: 'yaml',
  'vnd.kubernetes.protobuf': 'protobuf',
};

/** Does the range match `application/<subtype>` (wildcards included)? */
export function rangeMatches(r: MediaRange, subtype: string): boolean {
  if (r.type === '*') return true;
  return r.type === 'application' && (r.subtype === '*' || r.subtype === subtype);
}

export function acceptsJson(r: MediaRange): boolean {
  return rangeMatches(r, 'json');
}

export type Target =
  | { as: 'object'; encoding: Encoding; yaml?: boolean }
  | { as: 'Table'; version: string; encoding: Encoding }
  | { as: 'PartialObjectMetadata'; version: string; encoding: Encoding }
  | { as: 'PartialObjectMetadataList'; version: string; encoding: Encoding };

export interface NegotiateOptions {
  /** the request returns a collection (PartialObjectMetadataList is only valid there) */
  list: boolean;
  watch: boolean;
  /** the kind has a protobuf schema (built-in kinds; custom resources do not) */
  protobuf: boolean;
}

/**
 * The answer's form and encoding for a resource request, or undefined when nothing the client accepts is
 * served (the caller answers 406). A wildcard range is served as JSON.
 */
export function negotiateTarget(accept: string | null | undefined, o: NegotiateOptions): Target | undefined {
  for (const r of parseAccept(accept)) {
    const encoding = encodingOf(r, o);
    if (!encoding) continue;
    const as = r.params.as;
    if (!as) return encoding === 'yaml' ? { as: 'object', encoding, yaml: true } : { as: 'object', encoding };
    // YAML is never offered for the meta.k8s.io conversions
    if (r.params.g !== 'meta.k8s.io' || encoding === 'yaml') continue;
    const version = r.params.v ?? '';
    if (version !== 'v1' && version !== 'v1beta1') continue;
    if (as === 'Table') return { as: 'Table', version, encoding };
    if (as === 'PartialObjectMetadata' && (!o.list || o.watch))
      return { as: 'PartialObjectMetadata', version, encoding };
    if (as === 'PartialObjectMetadataList' && o.list)
      return o.watch
        ? { as: 'PartialObjectMetadata', version, encoding }
        : { as: 'PartialObjectMetadataList', version, encoding };
  }
  return undefined;
}

function encodingOf(r: MediaRange, o: NegotiateOptions): Encoding | undefined {
  if (r.type === '*' || (r.type === 'application' && r.subtype === '*')) return 'json';
  if (r.type !== 'application') return undefined;
  const e = SUBTYPES[r.subtype];
  if (e === 'yaml' && o.watch) return undefined;
  if (e === 'protobuf' && !o.protobuf) return undefined;
  return e;
}
