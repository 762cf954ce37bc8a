/**
 * Composite `continue` token for fleet-wide paged lists.
 *
 * A paged list walks the clusters of the membership one after another, in the membership's sorted order.
 * The token says where the walk stands and which RV every cluster is read at, so that every page reads each
 * cluster at the RV it started with (the composite list RV) and no item is lost or repeated:
 *
 *   base64url(UTF-8(JSON.stringify([1, D, i, T, S, RV_1, …, RV_n])))     (no padding)
 *
 *   1     format version
 *   D     the membership digest of rv.ts (9 digits): a token from another membership is refused
 *   i     index, in the sorted membership, of the cluster the next page starts in
 *   T     that cluster's own upstream continue token ("" = start the cluster from its beginning)
 *   S     how many items of the page asked with T earlier fleet pages already returned (a fleet page can
 *         end inside a cluster's page: the next one asks the same page again and skips them)
 *   RV_k  the RV cluster k was (or will be) read at; "" = not read yet (read it at its most recent RV)
 *
 * 50 clusters with 10-digit RVs and a 200-character upstream token: ≈ 1.2 KB.
 */

import { badRequest, expired, type Status } from '../kube/status.ts';
import { base64urlDecode, base64urlEncode } from '../util/base64.ts';
import { asMembership, type Membership } from './rv/index.ts';

export interface ContinueState {
  /** index of the cluster the next page starts in, in the sorted membership */
  index: number;
  /** its name */
  cluster: string;
  /** its upstream continue token; "" = from its first item */
  upstream: string;
  /** items of the page asked with `upstream` that earlier fleet pages already returned */
  skip: number;
  /** RV per cluster ("" = not read yet) */
  rvs: Map<string, string>;
}

export type DecodeContinueResult =
  | ({ ok: true } & ContinueState)
  | { ok: false; reason: 'malformed' | 'membership' };

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const VERSION = 1;

/**
 * Encodes where the walk stands. `at` is the cluster's index in the sorted membership or its name.
 * Throws a RangeError for a cluster outside the membership (a programming error).
 */
export function encodeContinue(
  membership: readonly string[] | Membership,
  at: number | string,
  upstream: string,
  rvs: ReadonlyMap<string, string>,
  skip = 0,
): string {
  const m = asMembership(membership);
  const index = typeof at === 'number' ? at : m.names.indexOf(at);
  if (!Number.isInteger(index) || index < 0 || index >= m.names.length) {
    throw new RangeError(`continue: cluster ${JSON.stringify(at)} is not a member`);
  }
  if (!Number.isInteger(skip) || skip < 0) throw new RangeError(`continue: skip ${skip} is not a count`);
  const arr: (string | number)[] = [VERSION, m.digest, index, upstream, skip];
  for (const c of m.names) arr.push(rvs.get(c) ?? '');
  return base64urlEncode(enc.encode(JSON.stringify(arr)));
}

/** Decodes and validates a token for the current membership. Never throws. */
export function decodeContinue(
  token: string,
  membership: readonly string[] | Membership,
): DecodeContinueResult {
  if (typeof token !== 'string' || token.length === 0 || token.length > 65536)
    return { ok: false, reason: 'malformed' };
  const bytes = base64urlDecode(token);
  if (!bytes) return { ok: false, reason: 'malformed' };
  let arr: unknown;
  try {
    arr = JSON.parse(dec.decode(bytes));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (!Array.isArray(arr) || arr.length < 5 || arr[0] !== VERSION) return { ok: false, reason: 'malformed' };
  const [, digest, index, upstream, skip] = arr;
  if (typeof digest !== 'string' || !/^[0-9]{9}$/.test(digest)) return { ok: false, reason: 'malformed' };
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0)
    return { ok: false, reason: 'malformed' };
  if (typeof upstream !== 'string') return { ok: false, reason: 'malformed' };
  if (typeof skip !== 'number' || !Number.isInteger(skip) || skip < 0)
    return { ok: false, reason: 'malformed' };
  for (let k = 5; k < arr.length; k++)
    if (typeof arr[k] !== 'string') return { ok: false, reason: 'malformed' };
  const n = arr.length - 5;
  if (index >= n) return { ok: false, reason: 'malformed' };
  // canonical: exactly what encodeContinue writes
  if (base64urlEncode(enc.encode(JSON.stringify(arr))) !== token) return { ok: false, reason: 'malformed' };
  const m = asMembership(membership);
  if (digest !== m.digest || n !== m.names.length) return { ok: false, reason: 'membership' };
  const rvs = new Map<string, string>();
  for (let k = 0; k < n; k++) rvs.set(m.names[k]!, arr[5 + k] as string);
  return { ok: true, index, cluster: m.names[index]!, upstream, skip, rvs };
}

/**
 * The Status to answer for a token that does not decode: 410 Expired (kube's text) when the fleet's
 * clusters changed since the first page, 400 BadRequest when it is no fleet token at all.
 */
export function continueErrorStatus(reason: 'malformed' | 'membership'): Status {
  if (reason === 'membership') {
    return expired(
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
    );
  }
  return badRequest('invalid continue token: not a continue token issued by this fleet');
}
