/**
 * Fleet-wide access reviews, pure: what `kubectl auth can-i`, `auth can-i --list` and `auth whoami` mean
 * when asked of the whole fleet rather than of one cluster.
 *
 * - SelfSubjectAccessReview: asked of every cluster of the clusterspace; `allowed` only when every cluster
 *   allows (a fleet-wide "yes" is a promise that holds wherever the request lands); `denied` when any
 *   cluster denies outright; `reason` names the clusters that deny, with each one's own reason, and the
 *   ones that could not be asked. A caller that puts the annotation {@link BREAKDOWN_ANNOTATION} on its
 *   review gets the per-cluster answers back in the same annotation, as JSON
 *   `{"<cluster>": {"allowed": bool, "denied"?: bool, "reason"?: string}}`.
 * - SelfSubjectRulesReview: the rules that hold in every cluster (see {@link mergeRules});
 *   `incomplete` when any cluster was incomplete or could not be asked.
 * - SelfSubjectReview: the identity the fleet sends upstream, answered by the fleet itself.
 *
 * Request bodies arrive as JSON, YAML (parsed by plan/body.ts) or protobuf (what kubectl sends): the
 * protobuf is decoded here into the JSON shape, so each cluster is asked in JSON and its answer merged.
 */
import {
  decodeEnvelope,
  type Field,
  fieldString,
  readFields,
  readObjectMeta,
  WIRE_LEN,
} from '../kube/protobuf.ts';
import { badRequest, type Status } from '../kube/status.ts';
import { decodeName } from '../merge/names/index.ts';
import type { Body } from './body.ts';

/** On a review: ask for the per-cluster breakdown; on the answer: the breakdown, as JSON. */
export const BREAKDOWN_ANNOTATION = 'fleet.karmada.io/clusters';

export type ReviewKind = 'SelfSubjectAccessReview' | 'SelfSubjectRulesReview' | 'SelfSubjectReview';

const REVIEWS: Record<string, { group: string; kind: ReviewKind }> = {
  selfsubjectaccessreviews: { group: 'authorization.k8s.io', kind: 'SelfSubjectAccessReview' },
  selfsubjectrulesreviews: { group: 'authorization.k8s.io', kind: 'SelfSubjectRulesReview' },
  selfsubjectreviews: { group: 'authentication.k8s.io', kind: 'SelfSubjectReview' },
};

/** The review a create at the fleet view is, or undefined for any other request. */
export function fleetReviewKind(info: {
  verb: string;
  apiGroup: string;
  resource: string;
  name: string;
  subresource: string;
}): ReviewKind | undefined {
  if (info.verb !== 'create' || info.name !== '' || info.subresource !== '') return undefined;
  const r = REVIEWS[info.resource];
  return r && r.group === info.apiGroup ? r.kind : undefined;
}

/** A review as the fleet reads it: the JSON object and whether the caller asked for the breakdown. */
export interface Review {
  object: Record<string, any>;
  breakdown: boolean;
}

// ------------------------------------------------------------------------------------ protobuf bodies

type Msg = { buf: Uint8Array; start: number; end: number };

function fieldsOf(m: Msg): Array<Field & { sub: Msg }> {
  return readFields(m.buf, m.start, m.end).map((f) => ({
    ...f,
    sub: { buf: m.buf, start: f.valueStart, end: f.valueEnd },
  }));
}

/** The string fields of a message by number → JSON name; repeated ones (listed in `repeated`) as arrays. */
function strings(m: Msg, names: Record<number, string>, repeated: ReadonlySet<number> = new Set()) {
  const out: Record<string, any> = {};
  for (const f of fieldsOf(m)) {
    const key = names[f.num];
    if (!key || f.wire !== WIRE_LEN) continue;
    const v = fieldString(m.buf, f);
    if (!repeated.has(f.num)) out[key] = v;
    else out[key] = [...(out[key] ?? []), v];
  }
  return out;
}

/** FieldSelectorAttributes / LabelSelectorAttributes: rawSelector = 1, requirements = 2 {key, operator, values}. */
function selectorAttributes(m: Msg): Record<string, any> {
  const out: Record<string, any> = {};
  for (const f of fieldsOf(m)) {
    if (f.wire !== WIRE_LEN) continue;
    if (f.num === 1) out.rawSelector = fieldString(m.buf, f);
    if (f.num === 2) {
      out.requirements ??= [];
      out.requirements.push(strings(f.sub, { 1: 'key', 2: 'operator', 3: 'values' }, new Set([3])));
    }
  }
  return out;
}

/** ResourceAttributes (authorization/v1 generated.proto): namespace 1 … name 7, fieldSelector 8, labelSelector 9. */
function resourceAttributes(m: Msg): Record<string, any> {
  const names = {
    1: 'namespace',
    2: 'verb',
    3: 'group',
    4: 'version',
    5: 'resource',
    6: 'subresource',
    7: 'name',
  };
  const out = strings(m, names);
  for (const f of fieldsOf(m)) {
    if (f.wire !== WIRE_LEN) continue;
    if (f.num === 8) out.fieldSelector = selectorAttributes(f.sub);
    if (f.num === 9) out.labelSelector = selectorAttributes(f.sub);
  }
  return out;
}

/** The spec of a protobuf review: SSAR {resourceAttributes 1, nonResourceAttributes 2}, SSRR {namespace 1}. */
function protobufSpec(kind: ReviewKind, spec: Msg): Record<string, any> {
  if (kind === 'SelfSubjectRulesReview') return strings(spec, { 1: 'namespace' });
  const out: Record<string, any> = {};
  for (const f of fieldsOf(spec)) {
    if (f.wire !== WIRE_LEN) continue;
    if (f.num === 1) out.resourceAttributes = resourceAttributes(f.sub);
    if (f.num === 2) out.nonResourceAttributes = strings(f.sub, { 1: 'path', 2: 'verb' });
  }
  return out;
}

function fromProtobuf(kind: ReviewKind, bytes: Uint8Array): Record<string, any> {
  const env = decodeEnvelope(bytes);
  const raw: Msg = { buf: env.raw, start: 0, end: env.raw.length };
  const meta = readObjectMeta(env.raw);
  const object: Record<string, any> = {
    kind,
    apiVersion: env.apiVersion,
    metadata: Object.keys(meta.annotations).length ? { annotations: meta.annotations } : {},
  };
  // every review has its spec as field 2 (SelfSubjectReview has none: its field 2 is the status)
  if (kind !== 'SelfSubjectReview')
    for (const f of fieldsOf(raw))
      if (f.num === 2 && f.wire === WIRE_LEN) object.spec = protobufSpec(kind, f.sub);
  object.spec ??= {};
  return object;
}

/** The review a request body holds (JSON, YAML or protobuf), or the Status that refuses it. */
export function readReview(kind: ReviewKind, group: string, body: Body): Review | Status {
  let object: Record<string, any>;
  if (body.kind === 'protobuf') {
    try {
      object = fromProtobuf(kind, body.bytes);
    } catch (e) {
      return badRequest(`the protobuf body could not be decoded: ${(e as Error).message}`);
    }
  } else if (body.kind === 'json' && body.value && typeof body.value === 'object') {
    object = body.value as Record<string, any>;
  } else if (body.kind === 'empty' && kind === 'SelfSubjectReview') {
    object = { kind, apiVersion: `${group}/v1`, metadata: {} };
  } else return badRequest(`the body of a ${kind} must be a ${kind} object`);
  if (object.kind !== undefined && object.kind !== kind)
    return badRequest(`the body's kind is ${JSON.stringify(object.kind)}, not ${kind}`);
  const annotations = object.metadata?.annotations;
  const breakdown = !!annotations && typeof annotations === 'object' && BREAKDOWN_ANNOTATION in annotations;
  return { object, breakdown };
}

/**
 * The clusters to ask and the spec each gets: a fleet-named namespace (`shop.clusterspace.member2`) in
 * the review means that cluster's `shop` only, so only that cluster is asked, with the plain name. A
 * fleet name of a cluster outside `clusters` is a 400.
 */
export function reviewTargets(
  review: Review,
  clusters: readonly string[],
): { clusters: string[]; specFor: (cluster: string) => Record<string, any> } | Status {
  const spec = (review.object.spec ?? {}) as Record<string, any>;
  const ra = spec.resourceAttributes as Record<string, any> | undefined;
  const nsHolder =
    ra && typeof ra.namespace === 'string' ? ra : typeof spec.namespace === 'string' ? spec : undefined;
  const ns = nsHolder?.namespace as string | undefined;
  const d = ns ? decodeName(ns) : undefined;
  if (!d?.cluster) return { clusters: [...clusters], specFor: () => spec };
  if (!clusters.includes(d.cluster))
    return badRequest(
      `namespace "${ns}" belongs to cluster "${d.cluster}", which this clusterspace does not include`,
    );
  const plain = JSON.parse(JSON.stringify(spec));
  (nsHolder === ra ? plain.resourceAttributes : plain).namespace = d.name;
  return { clusters: [d.cluster], specFor: () => plain };
}

// ---------------------------------------------------------------------------------------- answers

/** One cluster's answer to the review: its status, or why it could not answer. */
export type ClusterAnswer =
  | { cluster: string; status: Record<string, any> }
  | { cluster: string; failed: string };

/** Per-cluster access decision, as the breakdown annotation shows it. */
export interface AccessDecision {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  evaluationError?: string;
}

function decision(a: ClusterAnswer): AccessDecision {
  if ('failed' in a) return { allowed: false, reason: a.failed };
  const s = a.status;
  return {
    allowed: s.allowed === true,
    ...(s.denied === true ? { denied: true } : {}),
    ...(typeof s.reason === 'string' && s.reason ? { reason: s.reason } : {}),
    ...(typeof s.evaluationError === 'string' && s.evaluationError
      ? { evaluationError: s.evaluationError }
      : {}),
  };
}

/**
 * The fleet's SubjectAccessReviewStatus: allowed where every cluster allows; denied where any denies
 * outright; the reason names every cluster that does not allow (and why, when it said), so
 * `kubectl auth can-i` prints `no - denied in member2 (…); member3 unreachable (…)`.
 */
export function mergeAccess(answers: readonly ClusterAnswer[]): {
  status: AccessDecision;
  perCluster: Record<string, AccessDecision>;
} {
  const perCluster: Record<string, AccessDecision> = {};
  for (const a of answers) perCluster[a.cluster] = decision(a);
  const notAllowed = answers.filter((a) => !perCluster[a.cluster]!.allowed);
  if (answers.length > 0 && notAllowed.length === 0)
    return {
      status: {
        allowed: true,
        reason: `allowed in every cluster (${answers.map((a) => a.cluster).join(', ')})`,
      },
      perCluster,
    };
  const parts = notAllowed.map((a) => {
    const d = perCluster[a.cluster]!;
    const why =
      'failed' in a
        ? `could not be asked: ${a.failed}`
        : d.reason
          ? `not allowed: ${d.reason}`
          : 'not allowed';
    return `${a.cluster} ${why}`;
  });
  const errors = answers.flatMap((a) => {
    const e = perCluster[a.cluster]!.evaluationError;
    return e ? [`${a.cluster}: ${e}`] : [];
  });
  const status: AccessDecision = {
    allowed: false,
    ...(notAllowed.some((a) => perCluster[a.cluster]!.denied) ? { denied: true } : {}),
    reason: answers.length ? parts.join('; ') : 'no cluster in this clusterspace',
    ...(errors.length ? { evaluationError: errors.join('; ') } : {}),
  };
  return { status, perCluster };
}
