/**
 * The name form of an answer: an object answers under the name it was asked by (docs/names.md).
 *
 * kube-apiserver answers every get, create, update, patch, apply and delete under the name the request
 * used, and client-go programs rely on it: Helm diffs its old and new release by the names it reads back,
 * controller-runtime keys its cache by them, kubectl's prune and apply compare them. So:
 *
 * - at the root (no cluster named by the scope), objects keep their fleet names, as the fleet view shows
 *   them (the control plane's plain with federation on);
 * - in a scope that already names its cluster (an in-path clusterspace `…/clusterspaces/member2/…`, a
 *   namespace by fleet name `-n shop.clusterspace.member2`; the `/clusterspaces/<c>/` prefix is a
 *   transparent proxy and never comes here), that cluster's objects carry their plain names in every
 *   answer, references included;
 * - a request that spells a fleet name for its one object (the URL's name, a create's `metadata.name`, a
 *   `metadata.name=` field selector) gets that spelling back, in any scope: the answer takes the fleet
 *   view that spelling comes from (`x.clusterspace.karmada` included, which federation would show plain).
 *
 * Pure.
 */
import { parseFieldSelector } from '../kube/fields.ts';
import { decodeName } from '../merge/names/index.ts';
import type { FleetView } from '../merge/objects/index.ts';
import type { RequestInfo } from '../request/info.ts';

/**
 * The view an answer to `info` is shown in. `spelled`: the name the request gave its one object (see the
 * top of this file), undefined for a collection or a create by generateName.
 */
export function answerView(
  federation: boolean,
  info: Pick<RequestInfo, 'clusterspace'>,
  spelled?: string,
): FleetView {
  const d = spelled ? decodeName(spelled) : undefined;
  if (d?.cluster !== undefined) return { federation: federation && d.cluster !== 'karmada' };
  // the cluster the scope names (plan/namespace.ts made a namespace by fleet name the clusterspace)
  const scope = info.clusterspace ?? 'all';
  return scope === 'all' ? { federation } : { federation, scope };
}

/** The object name a collection's `metadata.name=` field selector spells, if any. */
export function selectedName(query: URLSearchParams): string | undefined {
  const sel = query.get('fieldSelector');
  if (!sel?.includes('metadata.name')) return undefined;
  try {
    return parseFieldSelector(sel).find((r) => r.field === 'metadata.name' && r.operator === '=')?.value;
  } catch {
    return undefined; // the plan answers its 400
  }
}
