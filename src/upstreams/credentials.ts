/**
 * What authenticates an upstream call (src/upstreams/client.ts `credentials`), made once where it depends
 * only on the identity or the endpoint's token, not once per request.
 */
import { type Identity, impersonationHeaders } from '../auth/identity.ts';

/** What authenticates one upstream call: see UpstreamClient.credentials. */
export interface Credentials {
  authorization?: string;
  /** shared by every call for the same identity: read only */
  headerLines: ReadonlyArray<readonly [string, string]>;
}

const NO_LINES: ReadonlyArray<readonly [string, string]> = Object.freeze([]);

/**
 * An identity's Impersonate-* lines, made once per identity object: identities are not changed once
 * made, and a caller's comes back as the same object for each of its requests (ANONYMOUS, the token
 * cache's, the impersonated one of a request and all its upstream calls).
 */
const linesByIdentity = new WeakMap<Identity, ReadonlyArray<readonly [string, string]>>();

export function identityLines(identity: Identity | undefined): ReadonlyArray<readonly [string, string]> {
  if (!identity) return NO_LINES;
  let lines = linesByIdentity.get(identity);
  if (!lines) {
    lines = impersonationHeaders(identity);
    linesByIdentity.set(identity, lines);
  }
  return lines;
}

/** `Bearer <token>`, the string made once while the endpoint's token stays the same */
let lastToken: string | undefined;
let lastBearer: string | undefined;

export function bearer(token: string | undefined): string | undefined {
  if (!token) return undefined;
  if (token !== lastToken) {
    lastBearer = `Bearer ${token}`;
    lastToken = token;
  }
  return lastBearer;
}
