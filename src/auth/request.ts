/**
 * What an authenticator may look at: the request's headers, and what the runtime alone knows about the
 * connection (Node: the verified TLS client certificate and the header lines as received).
 *
 * The runtime hands these facts to the Fetch handler as the second argument of `app.fetch` under a
 * symbol key (deploy/node/tls.ts builds them). A worker's env holds only bindings, keyed by strings, so
 * nothing a caller sends can ever appear there.
 */

/** A client certificate the Node TLS server verified, and which configured CA bundles it chains to. */
export interface ClientCertificate {
  commonName: string;
  organizations: string[];
  /** the bundles (authentication.x509.clientCA, authentication.frontProxy.clientCA) it chains to */
  trustedBy: ReadonlyArray<'x509' | 'frontProxy'>;
  /** SHA-256 fingerprint, for the audit log */
  fingerprint256: string;
}

export interface TransportFacts {
  clientCertificate?: ClientCertificate;
  /**
   * Every line of a header as received (Fetch's `Headers.get` joins repeated lines with ", ", which would
   * turn `--as-group a --as-group b` into one group). Absent where the runtime does not expose them.
   */
  headerLines?(name: string): string[] | undefined;
}

export const TRANSPORT_FACTS: unique symbol = Symbol.for('fleet-apiserver.transport-facts');

export function transportFacts(env: unknown): TransportFacts | undefined {
  if (!env || typeof env !== 'object') return undefined;
  return (env as { [TRANSPORT_FACTS]?: TransportFacts })[TRANSPORT_FACTS];
}

export interface AuthnRequest {
  headers: Headers;
  facts?: TransportFacts;
}

/**
 * The values of a header that may repeat, one per line. Where the runtime exposes only the joined value
 * (Workers), it is split at commas: exact for values without commas, which is what groups and extras are
 * in practice; Node passes the exact lines.
 */
export function headerValues(req: AuthnRequest, name: string): string[] {
  const lines = req.facts?.headerLines?.(name.toLowerCase());
  if (lines) return lines;
  const joined = req.headers.get(name);
  if (joined === null) return [];
  return joined
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
