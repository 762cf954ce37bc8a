/**
 * Who the caller is, and what identity goes upstream.
 *
 * The fleet calls every upstream with its own credential; the caller's identity travels as
 * `Impersonate-*` headers so each cluster's own RBAC decides (mode `impersonate`). In mode `passthrough`
 * the caller's own bearer token goes instead, and the clusters authenticate it themselves.
 */
export interface Identity {
  user: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

/** The groups kube-apiserver adds by itself (authenticated users / anonymous): never impersonated explicitly. */
export const ALL_AUTHENTICATED = 'system:authenticated';
export const ALL_UNAUTHENTICATED = 'system:unauthenticated';
export const ANONYMOUS_USER = 'system:anonymous';

export const ANONYMOUS: Identity = Object.freeze({
  user: ANONYMOUS_USER,
  groups: [ALL_UNAUTHENTICATED],
}) as Identity;

/** As kube's AuthenticatedGroupAdder: every authenticated (non-anonymous) user is in system:authenticated. */
export function withAuthenticatedGroup(identity: Identity): Identity {
  if (identity.user === ANONYMOUS_USER || identity.groups.includes(ALL_AUTHENTICATED)) return identity;
  return { ...identity, groups: [...identity.groups, ALL_AUTHENTICATED] };
}

/**
 * What the fleet sends upstream for one caller:
 * - `impersonate`: the fleet's own credential plus Impersonate-* for `identity`;
 * - `passthrough`: the caller's own Authorization header (or none for an anonymous caller), plus
 *   Impersonate-* only for a `kubectl --as` the fleet has verified.
 */
export type UpstreamIdentity =
  | { mode: 'impersonate'; identity: Identity }
  | { mode: 'passthrough'; authorization?: string; impersonate?: Identity };

/**
 * Header lines that carry an identity upstream, in the form kube-apiserver's impersonation filter reads:
 * one `Impersonate-Group` line per group (kube reads each line as one group and never splits on commas).
 * system:authenticated / system:unauthenticated are left out: the cluster adds the right one itself, and
 * leaving them out asks the fleet's credential for fewer impersonation rights.
 */
export function impersonationHeaders(identity: Identity | undefined): Array<[string, string]> {
  if (!identity) return [];
  const h: Array<[string, string]> = [['Impersonate-User', identity.user]];
  for (const g of identity.groups) {
    if (g === ALL_AUTHENTICATED || g === ALL_UNAUTHENTICATED) continue;
    h.push(['Impersonate-Group', g]);
  }
  if (identity.uid) h.push(['Impersonate-Uid', identity.uid]);
  for (const [k, vs] of Object.entries(identity.extra ?? {})) {
    // extra keys are case-insensitive header suffixes; kube percent-decodes them (unescapeExtraKey)
    const key = encodeURIComponent(k.toLowerCase());
    for (const v of vs) h.push([`Impersonate-Extra-${key}`, v]);
  }
  return h;
}
