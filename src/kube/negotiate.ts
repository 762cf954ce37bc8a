/**
 * Content negotiation for answers the fleet builds itself (merged lists, rewritten objects): it asks
 * upstreams for JSON only — never protobuf, which it would have to decode to merge — in the form the client
 * asked: a plain object/list, a server-side Table (`kubectl get`), or PartialObjectMetadata(List)
 * (client-go metadata informers). Pure.
 */
import { failure, type Status } from './status.ts';

export type Shape = 'object' | 'table' | 'metadata';

export interface Negotiated {
  shape: Shape;
  /** what to send upstream as Accept */
  accept: string;
}

/** One media range of an Accept header (or a Content-Type): `type/subtype;k=v;q=…`. */
export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

/** Parses one media type or range; parameter names are lowercased, quoted values unquoted, q clamped to [0,1]. */
export function parseMediaType(value: string): MediaRange {
  const [mt = '', ...rest] = value.split(';');
  const [type = '', subtype = ''] = mt.trim().toLowerCase().split('/');
  const params: Record<string, string> = {};
  let q = 1;
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const k = p.slice(0, eq).trim().toLowerCase();
    const v = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (k === 'q') {
      const n = Number(v);
      q = Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 1;
    } else params[k] = v;
  }
  return { type, subtype, params, q };
}

/**
 * An Accept header's ranges in the order a server should try them, as kube-apiserver's negotiation does:
 * higher q first, concrete types before wildcards, then the order sent. Ranges with q=0 are dropped; an
 * absent or empty header gives [] (anything is acceptable).
 */
export function parseAccept(header: string | null | undefined): MediaRange[] {
  const ranges = (header ?? '')
    .split(',')
    .map((part, i) => ({ r: parseMediaType(part), i }))
    .filter(({ r }) => r.type !== '' && r.q > 0);
  ranges.sort(
    (a, b) =>
      b.r.q - a.r.q ||
      (a.r.type === '*' ? 1 : 0) - (b.r.type === '*' ? 1 : 0) ||
      (a.r.subtype === '*' ? 1 : 0) - (b.r.subtype === '*' ? 1 : 0) ||
      a.i - b.i,
  );
  return ranges.map(({ r }) => r);
}

/** Does the range accept application/json? */
export function acceptsJson(r: MediaRange): boolean {
  return (
    (r.type === '*' && r.subtype === '*') ||
    (r.type === 'application' && (r.subtype === '*' || r.subtype === 'json'))
  );
}

/**
 * Picks what to answer. `listKind` true for collections (Table/PartialObjectMetadataList), false for one
 * object (Table/PartialObjectMetadata). Returns a 406 Status when nothing acceptable is left.
 */
export function negotiate(acceptHeader: string | null | undefined, list: boolean): Negotiated | Status {
  const ranges = parseAccept(acceptHeader);
  if (ranges.length === 0) return { shape: 'object', accept: 'application/json' };
  for (const r of ranges) {
    if (!acceptsJson(r)) continue;
    const as = r.params.as;
    if (!as) return { shape: 'object', accept: 'application/json' };
    const g = r.params.g;
    const v = r.params.v;
    if (g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) continue;
    if (as === 'Table') return { shape: 'table', accept: `application/json;as=Table;v=${v};g=meta.k8s.io` };
    if (as === (list ? 'PartialObjectMetadataList' : 'PartialObjectMetadata'))
      return { shape: 'metadata', accept: `application/json;as=${as};v=${v};g=meta.k8s.io` };
  }
  return failure(
    406,
    'NotAcceptable',
    'only the following media types are accepted by the fleet for merged answers: application/json (with as=Table or as=PartialObjectMetadata[List] for meta.k8s.io v1/v1beta1)',
  );
}
