/**
 * Fleet-wide access reviews at the fleet view (the root URL or `/clusterspaces/all`): `kubectl auth can-i`
 * (SelfSubjectAccessReview) and `auth can-i --list` (SelfSubjectRulesReview) are asked of every cluster
 * of the clusterspace and merged by src/plan/reviews.ts and src/plan/reviewrules.ts; `auth whoami`
 * (SelfSubjectReview) is answered by the fleet: the identity it sends upstream, after `--as`. Through
 * `/clusterspaces/<cluster>` the same requests stay plain passthrough (routes/passthrough.ts).
 *
 * kubectl sends reviews as protobuf and accepts JSON back; the fleet answers in JSON, as every write
 * through the fleet view does (a 406 when the client accepts no JSON). A cluster that cannot be asked
 * counts as not allowing, is named in the reason and gets a `Warning` header.
 */
import type { Context } from 'hono';
import { withAuthenticatedGroup } from '../auth/identity.ts';
import type { FleetConfig } from '../config/schema.ts';
import { negotiate } from '../kube/negotiate.ts';
import { failure, type Status, statusResponse } from '../kube/status.ts';
import { MAX_REQUEST_BODY_BYTES } from '../merge/writes.ts';
import { parseObjectBody, tooLarge } from '../plan/body.ts';
import { mergeRules } from '../plan/reviewrules.ts';
import {
  BREAKDOWN_ANNOTATION,
  type ClusterAnswer,
  mergeAccess,
  type Review,
  type ReviewKind,
  readReview,
  reviewTargets,
} from '../plan/reviews.ts';
import { readLimited } from '../request/body.ts';
import type { RequestInfo } from '../request/info.ts';
import type { FanOutDeps, FleetEnv } from '../types.ts';
import { fanOut, type Target, warningHeader } from '../upstreams/fanout.ts';

export type ReviewsDeps = FanOutDeps & { config: Pick<FleetConfig, 'limits'> };

export async function reviewsRoute(
  c: Context<FleetEnv>,
  deps: ReviewsDeps,
  info: RequestInfo,
  targets: Target[],
  kind: ReviewKind,
): Promise<Response> {
  const req = c.req.raw;
  const neg = negotiate(req.headers.get('accept'), false);
  if ('code' in neg) return statusResponse(neg);
  const limit = deps.config.limits?.maxBodyBytes ?? MAX_REQUEST_BODY_BYTES;
  const read = await readLimited(req.body, limit, { signal: req.signal });
  if (!read.ok)
    return statusResponse(
      read.reason === 'too-large'
        ? tooLarge(limit)
        : failure(400, 'BadRequest', 'the request body was not read whole'),
    );
  const body = parseObjectBody(read.bytes, req.headers.get('content-type'));
  if ('code' in body) return statusResponse(body);
  const review = readReview(kind, info.apiGroup, body);
  if ('code' in review) return statusResponse(review);
  if (kind === 'SelfSubjectReview') return whoami(c);

  const plan = reviewTargets(
    review,
    targets.map((t) => t.cluster),
  );
  if ('code' in plan) return statusResponse(plan);
  const asked = targets.filter((t) => plan.clusters.includes(t.cluster));
  const { answers, firstRefusal } = await askEach(deps, req, info, asked, (cluster) => ({
    kind,
    apiVersion: `${info.apiGroup}/v1`,
    spec: plan.specFor(cluster),
  }));
  // every cluster refused the review itself (a 400/422: the review is malformed): that refusal is the answer
  if (firstRefusal && answers.every((a) => 'failed' in a && a.refused)) return statusResponse(firstRefusal);

  const headers = new Headers({ 'Content-Type': 'application/json' });
  for (const a of answers)
    if ('failed' in a && a.unreachable)
      headers.append('Warning', warningHeader(`cluster ${a.cluster}: ${a.failed}`));
  const spec = (review.object.spec ?? {}) as Record<string, unknown>;
  let status: Record<string, unknown>;
  let breakdown: Record<string, unknown> | undefined;
  if (kind === 'SelfSubjectAccessReview') {
    const merged = mergeAccess(answers);
    status = { ...merged.status };
    breakdown = merged.perCluster;
  } else {
    status = mergeRules(answers);
    breakdown = Object.fromEntries(
      answers.map((a) =>
        'failed' in a
          ? [a.cluster, { failed: a.failed }]
          : [a.cluster, { incomplete: a.status.incomplete === true }],
      ),
    );
  }
  return answer(kind, info.apiGroup, review, spec, status, breakdown, headers);
}

type Asked = ClusterAnswer & { refused?: boolean; unreachable?: boolean };

/** Asks each target the review (JSON, as the caller); a refusal or unreachable cluster becomes `failed`. */
async function askEach(
  deps: FanOutDeps,
  req: Request,
  info: RequestInfo,
  targets: Target[],
  bodyFor: (cluster: string) => unknown,
): Promise<{ answers: Asked[]; firstRefusal?: Status }> {
  const headers = deps.client.forwardable(req.headers);
  headers.set('Content-Type', 'application/json');
  headers.set('Accept', 'application/json');
  headers.set('Accept-Encoding', 'identity');
  const outcomes = await fanOut(deps, targets, (t) => ({
    method: 'POST',
    path: info.kubePath,
    headers: new Headers(headers),
    body: JSON.stringify(bodyFor(t.cluster)),
    signal: req.signal,
  }));
  let firstRefusal: Status | undefined;
  const answers = await Promise.all(
    outcomes.map(async (o): Promise<Asked> => {
      const cluster = o.target.cluster;
      if (!o.ok) return { cluster, failed: `unreachable (${o.error.message})`, unreachable: true };
      const text = await o.res.text().catch(() => '');
      let parsed: any;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (o.res.ok && parsed?.status && typeof parsed.status === 'object')
        return { cluster, status: parsed.status };
      if (parsed?.kind === 'Status') {
        const st = parsed as Status;
        const refused = o.res.status === 400 || o.res.status === 422;
        if (refused && !firstRefusal) firstRefusal = st;
        return {
          cluster,
          failed: `answered ${o.res.status} ${st.reason ?? ''}: ${st.message ?? ''}`.trim(),
          refused,
          unreachable: o.res.status >= 500,
        };
      }
      return {
        cluster,
        failed: `answered ${o.res.status} without a review`,
        unreachable: o.res.status >= 500,
      };
    }),
  );
  return { answers, ...(firstRefusal ? { firstRefusal } : {}) };
}

/** The merged review: the caller's spec echoed, the fleet's status, the breakdown when asked for. */
function answer(
  kind: ReviewKind,
  group: string,
  review: Review,
  spec: Record<string, unknown>,
  status: Record<string, unknown>,
  breakdown: Record<string, unknown> | undefined,
  headers: Headers,
): Response {
  const metadata: Record<string, unknown> = { creationTimestamp: null };
  if (review.breakdown && breakdown)
    metadata.annotations = { [BREAKDOWN_ANNOTATION]: JSON.stringify(breakdown) };
  return new Response(JSON.stringify({ kind, apiVersion: `${group}/v1`, metadata, spec, status }), {
    status: 201,
    headers,
  });
}

/** `kubectl auth whoami`: the identity this request acts as upstream, as kube's SelfSubjectReview shows it. */
function whoami(c: Context<FleetEnv>): Response {
  const id = withAuthenticatedGroup(c.get('identity'));
  const userInfo: Record<string, unknown> = { username: id.user, groups: id.groups };
  if (id.uid) userInfo.uid = id.uid;
  if (id.extra && Object.keys(id.extra).length) userInfo.extra = id.extra;
  const metadata: Record<string, unknown> = { creationTimestamp: null };
  return new Response(
    JSON.stringify({
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata,
      status: { userInfo },
    }),
    { status: 201, headers: { 'Content-Type': 'application/json' } },
  );
}
