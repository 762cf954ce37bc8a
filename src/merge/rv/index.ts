/**
 * The fleet's resourceVersions: the composite codec (its format and its proof are in ./rvcodec.ts,
 * re-exported here) and what a client's `resourceVersion` / `resourceVersionMatch` mean for each cluster.
 */

import { badRequest, expired, failure, type Status } from '../../kube/status.ts';
import { asMembership, decodeComposite, type Membership } from './codec.ts';

export {
  asMembership,
  compositeWith,
  type DecodeCompositeResult,
  decodeComposite,
  encodeComposite,
  encodeCompositeFull,
  isFleetComposite,
  isMemberDecimalBytes,
  type Membership,
  membershipDigest,
  prepareMembership,
  type Splicer,
} from './codec.ts';

// ---------------------------------------------------------------------------------------------
// list / watch / get parameter semantics

export type ResourceVersionMatch = 'Exact' | 'NotOlderThan';

/** What to send one upstream. Absent fields are not sent. */
export interface UpstreamRVParams {
  resourceVersion?: string;
  resourceVersionMatch?: ResourceVersionMatch;
}

export type RVPlan =
  | { ok: true; perCluster: Map<string, UpstreamRVParams> }
  | { ok: false; kind: 'expired' | 'invalid'; status: Status };

function invalidListOptions(detail: string): Status {
  return failure(422, 'Invalid', `ListOptions.meta.k8s.io "" is invalid: ${detail}`, {
    kind: 'ListOptions',
    group: 'meta.k8s.io',
    causes: [
      { reason: 'FieldValueInvalid', message: detail.replace(/^[^:]+: /, ''), field: detail.split(':')[0] },
    ],
  });
}

/**
 * Maps the client's `resourceVersion` / `resourceVersionMatch` of a fleet-wide list or watch to one set of
 * parameters per cluster, with kube-apiserver's semantics:
 * - unset / "": most recent everywhere (resourceVersionMatch is then forbidden);
 * - "0": any version everywhere (not with Exact);
 * - a composite: each cluster at its own RV, same match; a cluster whose RV is unknown reads most recent.
 * A composite that does not decode for the current membership is `expired` (answer 410 Expired: the client
 * relists), a bad parameter combination `invalid` (the Status says 422 Invalid).
 */
export function planResourceVersion(
  verb: 'list' | 'watch',
  membership: readonly string[] | Membership,
  resourceVersion: string | undefined | null,
  resourceVersionMatch: string | undefined | null,
): RVPlan {
  const m = asMembership(membership);
  const rv = resourceVersion ?? '';
  const match = resourceVersionMatch ?? '';
  if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
    return {
      ok: false,
      kind: 'invalid',
      status: invalidListOptions(
        `resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"`,
      ),
    };
  }
  const perCluster = new Map<string, UpstreamRVParams>();
  if (rv === '') {
    if (match !== '') {
      return {
        ok: false,
        kind: 'invalid',
        status: invalidListOptions(
          'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      };
    }
    for (const c of m.names) perCluster.set(c, {});
    return { ok: true, perCluster };
  }
  if (rv === '0') {
    if (match === 'Exact') {
      return {
        ok: false,
        kind: 'invalid',
        status: invalidListOptions(
          'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      };
    }
    for (const c of m.names)
      perCluster.set(
        c,
        match ? { resourceVersion: '0', resourceVersionMatch: match } : { resourceVersion: '0' },
      );
    return { ok: true, perCluster };
  }
  const d = decodeComposite(rv, m);
  if (!d.ok) {
    const msg =
      verb === 'watch'
        ? `too old resource version: ${rv} (the fleet's clusters changed or the version is not a fleet resourceVersion)`
        : 'The resourceVersion for the provided list is too old.';
    return { ok: false, kind: 'expired', status: expired(msg) };
  }
  for (const [c, crv] of d.rvs) {
    if (crv === '') perCluster.set(c, {});
    else
      perCluster.set(
        c,
        match ? { resourceVersion: crv, resourceVersionMatch: match } : { resourceVersion: crv },
      );
  }
  return { ok: true, perCluster };
}

/**
 * The owning cluster's own RV from a composite (gets with resourceVersion, and `metadata.resourceVersion`
 * of updates / patches / deletes preconditions). "" and "0" pass through. A composite that does not decode,
 * or whose entry for `cluster` is unknown, is `invalid` (400 BadRequest).
 */
export function ownResourceVersion(
  composite: string,
  membership: readonly string[] | Membership,
  cluster: string,
): { ok: true; resourceVersion: string } | { ok: false; kind: 'invalid'; status: Status } {
  if (composite === '' || composite === '0') return { ok: true, resourceVersion: composite };
  const d = decodeComposite(composite, membership);
  const rv = d.ok ? d.rvs.get(cluster) : undefined;
  if (rv) return { ok: true, resourceVersion: rv };
  const why = !d.ok
    ? d.reason === 'membership'
      ? 'it was issued for another set of clusters'
      : 'it is not a fleet resourceVersion'
    : `it holds no version for cluster ${JSON.stringify(cluster)}`;
  return {
    ok: false,
    kind: 'invalid',
    status: badRequest(`invalid resourceVersion ${JSON.stringify(composite)}: ${why}`),
  };
}
