/**
 * The caller's own impersonation (`kubectl --as`, `--as-group`, `--as-uid`, Impersonate-Extra-*), checked
 * the way kube-apiserver's impersonation filter (pkg/endpoints/filters/impersonation.go) checks it: one
 * authorization question per thing impersonated (verb `impersonate` on users / serviceaccounts / groups /
 * uids / userextras/<key>), asked with a SubjectAccessReview, since the fleet has no RBAC of its own.
 * Only when every answer is yes does the fleet act as the requested identity; the headers themselves are
 * never forwarded.
 */

import type { Status } from '../kube/status.ts';
import { TtlCache } from '../util/ttlcache.ts';
import { forbidden } from './forbidden.ts';
import { ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER, type Identity } from './identity.ts';
import { type AuthnRequest, headerValues } from './request.ts';

export interface RequestedImpersonation {
  user: string;
  groups: string[];
  uid?: string;
  extra: Record<string, string[]>;
}

export type ParsedImpersonation =
  | { kind: 'none' }
  | { kind: 'requested'; requested: RequestedImpersonation }
  | { kind: 'invalid'; message: string };

const EXTRA_PREFIX = 'impersonate-extra-';

/** Reads Impersonate-* from the request. Groups, uid or extras without a user are invalid (as in kube). */
export function parseImpersonation(req: AuthnRequest): ParsedImpersonation {
  const user = req.headers.get('impersonate-user') ?? '';
  const groups = headerValues(req, 'impersonate-group');
  const uid = req.headers.get('impersonate-uid') ?? undefined;
  const extra: Record<string, string[]> = {};
  let extraSeen = false;
  let badKey: string | undefined;
  req.headers.forEach((_, name) => {
    if (!name.startsWith(EXTRA_PREFIX)) return;
    extraSeen = true;
    let key: string;
    try {
      key = decodeURIComponent(name.slice(EXTRA_PREFIX.length)).toLowerCase();
    } catch {
      badKey = name;
      return;
    }
    extra[key] = [...(extra[key] ?? []), ...headerValues(req, name)];
  });
  if (!user && !groups.length && uid === undefined && !extraSeen) return { kind: 'none' };
  if (badKey) return { kind: 'invalid', message: `invalid impersonation extra header ${badKey}` };
  if (!user)
    return {
      kind: 'invalid',
      message: 'requested impersonation of groups, uid or extras without impersonating a user',
    };
  if (uid === '') return { kind: 'invalid', message: 'Impersonate-Uid must not be empty' };
  return {
    kind: 'requested',
    requested: { user, groups, ...(uid !== undefined ? { uid } : {}), extra },
  };
}

export interface ResourceAttributes {
  verb: 'impersonate';
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name: string;
}

const SA_PREFIX = 'system:serviceaccount:';

/** The authorization questions one impersonation asks, in kube's order. */
export function impersonationChecks(r: RequestedImpersonation): ResourceAttributes[] {
  const out: ResourceAttributes[] = [];
  const sa = r.user.startsWith(SA_PREFIX) ? r.user.slice(SA_PREFIX.length).split(':') : undefined;
  if (sa && sa.length === 2 && sa[0] && sa[1])
    out.push({ verb: 'impersonate', group: '', resource: 'serviceaccounts', namespace: sa[0], name: sa[1] });
  else out.push({ verb: 'impersonate', group: '', resource: 'users', name: r.user });
  for (const g of r.groups) out.push({ verb: 'impersonate', group: '', resource: 'groups', name: g });
  if (r.uid !== undefined)
    out.push({ verb: 'impersonate', group: 'authentication.k8s.io', resource: 'uids', name: r.uid });
  for (const [k, vs] of Object.entries(r.extra))
    for (const v of vs)
      out.push({
        verb: 'impersonate',
        group: 'authentication.k8s.io',
        resource: 'userextras',
        subresource: k,
        name: v,
      });
  return out;
}

/**
 * The identity the request acts as once allowed. As kube: a service account without explicit groups gets
 * its fixed groups; system:authenticated (or, for system:anonymous, system:unauthenticated) is added
 * unless given.
 */
export function impersonatedIdentity(r: RequestedImpersonation): Identity {
  let groups = [...r.groups];
  const sa = r.user.startsWith(SA_PREFIX) ? r.user.slice(SA_PREFIX.length).split(':') : undefined;
  if (!groups.length && sa && sa.length === 2)
    groups = ['system:serviceaccounts', `system:serviceaccounts:${sa[0]}`];
  if (r.user !== ANONYMOUS_USER) {
    if (!groups.includes(ALL_AUTHENTICATED) && !groups.includes(ALL_UNAUTHENTICATED))
      groups.push(ALL_AUTHENTICATED);
  } else if (!groups.includes(ALL_UNAUTHENTICATED)) groups.push(ALL_UNAUTHENTICATED);
  const id: Identity = { user: r.user, groups };
  if (r.uid !== undefined) id.uid = r.uid;
  if (Object.keys(r.extra).length) id.extra = r.extra;
  return id;
}

/** A SubjectAccessReview body asking whether `who` may do `attrs` (authorization.k8s.io/v1). */
export function subjectAccessReview(who: Identity, attrs: ResourceAttributes): unknown {
  const resourceAttributes: Record<string, string> = {
    verb: attrs.verb,
    group: attrs.group,
    resource: attrs.resource,
    name: attrs.name,
  };
  if (attrs.subresource) resourceAttributes.subresource = attrs.subresource;
  if (attrs.namespace) resourceAttributes.namespace = attrs.namespace;
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      resourceAttributes,
      user: who.user,
      groups: who.groups,
      ...(who.uid ? { uid: who.uid } : {}),
      ...(who.extra ? { extra: who.extra } : {}),
    },
  };
}

/** Forbidden Status for a denied impersonation, in kube's words. */
export function impersonationForbidden(who: Identity, attrs: ResourceAttributes, reason?: string): Status {
  return forbidden(
    {
      user: who.user,
      verb: 'impersonate',
      resource: attrs.resource,
      apiGroup: attrs.group,
      name: attrs.name,
      ...(attrs.subresource ? { subresource: attrs.subresource } : {}),
      ...(attrs.namespace ? { namespace: attrs.namespace } : {}),
    },
    reason,
  );
}

export type Review = (
  who: Identity,
  attrs: ResourceAttributes,
) => Promise<{ allowed: boolean; reason?: string }>;

/**
 * Remembers answers for `ttlMs`, per place asked (`scope`: the cluster that answered). Only resolved
 * answers are kept, never a pending promise: on Workers a request must not await I/O another request
 * started. Bounded: the oldest entries go first.
 */
export class ReviewCache {
  private readonly entries: TtlCache<{ allowed: boolean; reason?: string }>;

  constructor(ttlMs: number, max = 2048, now: () => number = Date.now) {
    this.entries = new TtlCache(ttlMs, max, now);
  }

  wrap(scope: string, review: Review): Review {
    if (!this.entries.enabled) return review;
    return async (who, attrs) => {
      const key = JSON.stringify([scope, who.user, who.groups, who.uid ?? '', who.extra ?? {}, attrs]);
      const hit = this.entries.get(key);
      if (hit) return hit;
      const answer = await review(who, attrs);
      this.entries.set(key, answer);
      return answer;
    };
  }
}

/**
 * Checks every question; resolves to the impersonated identity, or the 403 Status for the first denial
 * (in kube's order), or throws what the review threw (an unreachable control plane: 503).
 */
export async function authorizeImpersonation(
  who: Identity,
  requested: RequestedImpersonation,
  review: Review,
): Promise<{ ok: true; identity: Identity } | { ok: false; status: Status }> {
  const checks = impersonationChecks(requested);
  const answers = await Promise.all(checks.map((a) => review(who, a)));
  for (const [i, a] of answers.entries()) {
    if (!a.allowed) return { ok: false, status: impersonationForbidden(who, checks[i]!, a.reason) };
  }
  return { ok: true, identity: impersonatedIdentity(requested) };
}
