/**
 * The plan of one merged list page: which clusters are asked, at which resourceVersion or continue
 * token, with what limit, and how many items of the first answer earlier pages already returned.
 *
 * A fleet page walks the clusters in fleet order. The first page asks every chosen cluster at the
 * client's resourceVersion (a composite: each at its own, see merge/rv/index.ts). A continue token (see
 * merge/continue.ts) says where the walk stopped: the cluster it stopped in resumes from its upstream
 * token (or, without one, at its RV, skipping the items already returned), the clusters after it start
 * from their first item at the RV the first page saw, and the clusters before it are done.
 * Pure: no I/O; every refusal is a Status returned.
 */
import type { Status } from '../kube/status.ts';
import { continueErrorStatus, decodeContinue } from '../merge/continue.ts';
import { parseItem } from '../merge/jsonsplit/index.ts';
import { type Membership, planResourceVersion } from '../merge/rv/index.ts';
import { chooseClusters, MATCHES_NOTHING } from '../plan/targets.ts';

/**
 * Query parameters the fleet sets per cluster; everything else goes upstream as the client sent it.
 * `shardSelector` (KEP-5866, 1.36 alpha) is the fleet's to honour or not, and it does not (as for merged
 * watches, watch/plan.ts): never sent upstream, so no cluster filters a list whose merged metadata then
 * carries no `shardInfo` (the merged ListMeta is the fleet's own); a client that sees none filters itself.
 * Honouring it would need every cluster of the clusterspace to (1.36 with the alpha gate on) and the
 * answer to say so per cluster; one cluster that ignores it would make the whole `shardInfo` a lie.
 */
export const LIST_PLANNED: ReadonlySet<string> = new Set([
  'shardSelector',
  'labelSelector',
  'fieldSelector',
  'continue',
  'resourceVersion',
  'resourceVersionMatch',
  'limit',
]);

export interface ListAsk<T extends { cluster: string }> {
  target: T;
  /** resourceVersion / resourceVersionMatch / continue for this cluster */
  params: Record<string, string>;
  /** items at the start of this cluster's answer that an earlier page returned */
  skip: number;
  /** the upstream continue token this cluster is asked with ('' for none) */
  askedWith: string;
  /** the upstream limit (0: none): the client's limit plus `skip` */
  limit: number;
}

export interface ListPlan<T extends { cluster: string }> {
  /** in fleet order; one ask at least when the clusterspace has a cluster */
  asks: ListAsk<T>[];
  /**
   * Nothing chosen: the one ask is a probe for the list's kind and columns (a selector nothing matches);
   * the merged list is empty.
   */
  emptyProbe: boolean;
  /** the client's page size (0: everything) */
  limit: number;
  /** RV per cluster of the fleet's membership as known before asking ('' = not read yet) */
  rvs: Map<string, string>;
  /** the exact query `ask` sends upstream */
  queryFor(ask: ListAsk<T>): URLSearchParams;
}

export interface ListPlanInput<T extends { cluster: string }> {
  query: URLSearchParams;
  /** the clusters of the clusterspace, in fleet order */
  targets: readonly T[];
  /** the fleet's membership: what composite RVs and continue tokens are made for */
  membership: Membership;
  plainNameCluster: string | undefined;
}

/** The client's `limit`: a decimal count, anything else (absent, negative, garbage) means none. */
export function listLimit(value: string | null): number {
  return value && /^\d+$/.test(value) ? Number(value) : 0;
}

export function planList<T extends { cluster: string }>(input: ListPlanInput<T>): ListPlan<T> | Status {
  const { query: q, targets, membership } = input;
  const choice = chooseClusters({
    labelSelector: q.get('labelSelector'),
    fieldSelector: q.get('fieldSelector'),
    targets,
    plainNameCluster: input.plainNameCluster,
  });
  if ('code' in choice) return choice;
  const limit = listLimit(q.get('limit'));
  const rvs = new Map<string, string>(membership.names.map((n) => [n, '']));
  const cont = q.get('continue');
  const asks = cont
    ? continuedAsks(cont, targets, choice.chosen, membership, rvs, limit)
    : firstPageAsks(q, choice.chosen, membership, limit);
  if (!Array.isArray(asks)) return asks;

  // nothing chosen: still ask one cluster, with a selector nothing matches, for the list's kind and columns
  const emptyProbe = asks.length === 0 && targets.length > 0;
  if (emptyProbe) asks.push({ target: targets[0]!, params: {}, skip: 0, askedWith: '', limit: 0 });

  const queryFor = (a: ListAsk<T>): URLSearchParams => {
    const out = new URLSearchParams();
    for (const [k, v] of q) if (!LIST_PLANNED.has(k)) out.append(k, v);
    const label = emptyProbe ? MATCHES_NOTHING : choice.labelForward;
    if (label) out.set('labelSelector', label);
    const field = emptyProbe ? '' : choice.fieldFor(a.target.cluster);
    if (field) out.set('fieldSelector', field);
    for (const [k, v] of Object.entries(a.params)) out.set(k, v);
    if (a.limit > 0) out.set('limit', String(a.limit));
    return out;
  };
  return { asks, emptyProbe, limit, rvs, queryFor };
}

/** The first page: every chosen cluster at the client's resourceVersion, from its first item. */
function firstPageAsks<T extends { cluster: string }>(
  q: URLSearchParams,
  chosen: readonly T[],
  membership: Membership,
  limit: number,
): ListAsk<T>[] | Status {
  const plan = planResourceVersion(
    'list',
    membership,
    q.get('resourceVersion'),
    q.get('resourceVersionMatch'),
  );
  if (!plan.ok) return plan.status;
  return chosen.map((target) => {
    const p = plan.perCluster.get(target.cluster) ?? {};
    const params: Record<string, string> = {};
    if (p.resourceVersion !== undefined) params.resourceVersion = p.resourceVersion;
    if (p.resourceVersionMatch !== undefined) params.resourceVersionMatch = p.resourceVersionMatch;
    return { target, params, skip: 0, askedWith: '', limit };
  });
}

/** A later page: from the cluster the token stopped in, on; `rvs` takes the token's RVs. */
function continuedAsks<T extends { cluster: string }>(
  token: string,
  targets: readonly T[],
  chosen: readonly T[],
  membership: Membership,
  rvs: Map<string, string>,
  limit: number,
): ListAsk<T>[] | Status {
  const d = decodeContinue(token, membership);
  if (!d.ok) return continueErrorStatus(d.reason);
  for (const [k, v] of d.rvs) rvs.set(k, v);
  const order = targets.map((t) => t.cluster);
  const from = order.indexOf(d.cluster);
  const asks: ListAsk<T>[] = [];
  for (const target of chosen) {
    const at = order.indexOf(target.cluster);
    if (at < from) continue;
    const params: Record<string, string> = {};
    const rv = rvs.get(target.cluster) ?? '';
    const first = at === from;
    const skip = first ? d.skip : 0;
    if (first && d.upstream) params.continue = d.upstream;
    else if (rv) Object.assign(params, { resourceVersion: rv, resourceVersionMatch: 'Exact' });
    asks.push({
      target,
      params,
      skip,
      askedWith: first ? d.upstream : '',
      limit: limit > 0 ? limit + skip : 0,
    });
  }
  return asks;
}

/**
 * How to read `ask`'s page again after its body broke (a cut or a stall), so the second answer holds the
 * same items in the same order and the reader can skip what it already took: the same upstream continue
 * token when the page was asked with one (the token pins its RV, and kube refuses a resourceVersion next
 * to a continue), otherwise the RV the first answer was served at, exactly
 * (`resourceVersion=<rv>&resourceVersionMatch=Exact`: kube serves it while that RV is not compacted).
 * Undefined when the first answer named no RV: nothing would make a second read the same list.
 */
export function rereadAsk<T extends { cluster: string }>(
  ask: ListAsk<T>,
  servedAt: string | undefined,
): ListAsk<T> | undefined {
  if (ask.askedWith) return { ...ask, params: { continue: ask.askedWith } };
  if (!servedAt) return undefined;
  return { ...ask, params: { resourceVersion: servedAt, resourceVersionMatch: 'Exact' } };
}

/**
 * Whether two list items (or Table rows) are the same object: same namespace and name (a row's `object`,
 * when the Table carries one). True when either does not say: a re-read is then trusted by its count.
 */
export function sameListObject(a: Uint8Array, b: Uint8Array): boolean {
  const key = (bytes: Uint8Array): string | undefined => {
    const v = parseItem(bytes) as Record<string, any> | null;
    const md = v?.metadata ?? v?.object?.metadata;
    return typeof md?.name === 'string' ? `${md.namespace ?? ''}/${md.name}` : undefined;
  };
  const ka = key(a);
  const kb = key(b);
  return ka === undefined || kb === undefined || ka === kb;
}
