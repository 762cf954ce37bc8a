/**
 * Who the caller is, and what identity goes upstream.
 *
 * The fleet calls every upstream with its own credential; the caller's identity travels as
 * `Impersonate-*` headers so each cluster's own RBAC decides. Authenticators that fill `Identity` are
 * added by the identity work (issue 6); until then no caller identity is known and nothing is
 * impersonated — see the README's security note.
 */
export interface Identity {
  user: string;
  groups: string[];
  uid?: string;
  extra?: Record<string, string[]>;
}

/** Headers that carry an identity upstream, in the form kube-apiserver's impersonation filter reads. */
export function impersonationHeaders(identity: Identity | undefined): Array<[string, string]> {
  if (!identity) return [];
  const h: Array<[string, string]> = [['Impersonate-User', identity.user]];
  for (const g of identity.groups) h.push(['Impersonate-Group', g]);
  if (identity.uid) h.push(['Impersonate-Uid', identity.uid]);
  for (const [k, vs] of Object.entries(identity.extra ?? {})) {
    // extra keys are case-insensitive header suffixes; kube percent-encodes what a header name can't hold
    const key = encodeURIComponent(k.toLowerCase());
    for (const v of vs) h.push([`Impersonate-Extra-${key}`, v]);
  }
  return h;
}
