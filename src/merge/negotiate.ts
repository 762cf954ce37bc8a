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

interface MediaRange {
  type: string;
  params: Map<string, string>;
  q: number;
  order: number;
}

export function parseAccept(header: string | null | undefined): MediaRange[] {
  if (!header || header.trim() === '') return [];
  const out: MediaRange[] = [];
  header.split(',').forEach((part, order) => {
    const [type, ...ps] = part.split(';').map((s) => s.trim());
    if (!type) return;
    const params = new Map<string, string>();
    let q = 1;
    for (const p of ps) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (k === 'q') q = Number.isFinite(Number(v)) ? Number(v) : 0;
      else params.set(k, v);
    }
    if (q > 0) out.push({ type: type.toLowerCase(), params, q, order });
  });
  return out.sort((a, b) => b.q - a.q || a.order - b.order);
}

const JSON_TYPES = new Set(['application/json', 'application/*', '*/*']);

/**
 * Picks what to answer. `listKind` true for collections (Table/PartialObjectMetadataList), false for one
 * object (Table/PartialObjectMetadata). Returns a 406 Status when nothing acceptable is left.
 */
export function negotiate(acceptHeader: string | null | undefined, list: boolean): Negotiated | Status {
  const ranges = parseAccept(acceptHeader);
  if (ranges.length === 0) return { shape: 'object', accept: 'application/json' };
  for (const r of ranges) {
    if (!JSON_TYPES.has(r.type)) continue;
    const as = r.params.get('as');
    if (!as) return { shape: 'object', accept: 'application/json' };
    const g = r.params.get('g');
    const v = r.params.get('v');
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
