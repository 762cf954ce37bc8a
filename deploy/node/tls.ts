/**
 * TLS on the Node server: serving certificate, client certificates, and what the fleet learns from them.
 *
 * - Serving: `config.serving` (or the certificate a test passes), HTTPS only.
 * - Client certificates, as kube-apiserver: requested, never required (token callers have none); a
 *   presented certificate must chain to a configured bundle (`authentication.x509.clientCA`, or
 *   `authentication.frontProxy.clientCA`), be in its validity period and, when it names extended key
 *   usages, allow client authentication. CN is the user, O the groups.
 * - Per request, the verified certificate and the header lines as received are handed to the app as
 *   TransportFacts (src/auth/request.ts): the Fetch handler never touches a socket.
 */
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ServerOptions as HttpsOptions } from 'node:https';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import { useCertificateAuthn } from '../../src/auth/authenticator.ts';
import { certificateAuthn } from '../../src/auth/certificates.ts';
import type { ClientCertificate, TransportFacts } from '../../src/auth/request.ts';
import { ConfigError, type FleetConfig } from '../../src/config/schema.ts';

// the certificates verified here are who the caller is (x509, front-proxy): Node links their
// authenticators in; the worker, which sees no client certificate, bundles none of them
useCertificateAuthn(certificateAuthn);

const CLIENT_AUTH_EKU = '1.3.6.1.5.5.7.3.2';

function pemBundle(b64: string, where: string): X509Certificate[] {
  const text = Buffer.from(b64, 'base64').toString('utf8');
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (!pems.length) throw new ConfigError(`${where}: no PEM certificate found`);
  try {
    return pems.map((p) => new X509Certificate(p));
  } catch (e) {
    throw new ConfigError(`${where}: ${(e as Error).message}`);
  }
}

interface Bundles {
  x509?: X509Certificate[];
  frontProxy?: X509Certificate[];
}

function bundlesOf(config: FleetConfig): Bundles {
  const a = config.authentication;
  const out: Bundles = {};
  if (a.x509?.clientCAData)
    out.x509 = pemBundle(a.x509.clientCAData, 'config.authentication.x509.clientCAData');
  if (a.frontProxy?.clientCAData)
    out.frontProxy = pemBundle(a.frontProxy.clientCAData, 'config.authentication.frontProxy.clientCAData');
  return out;
}

/**
 * The HTTPS options for this configuration: the serving certificate (`base`, or config.serving), and the
 * client-certificate request when x509 or front-proxy authentication is on. undefined: plain HTTP.
 */
export function httpsOptions(config: FleetConfig, base?: HttpsOptions): HttpsOptions | undefined {
  const s = config.serving;
  let opts: HttpsOptions | undefined = base ? { ...base } : undefined;
  if (s?.certData && s.keyData)
    opts = {
      ...opts,
      cert: Buffer.from(s.certData, 'base64').toString('utf8'),
      key: Buffer.from(s.keyData, 'base64').toString('utf8'),
    };
  const b = bundlesOf(config);
  const cas = [...(b.x509 ?? []), ...(b.frontProxy ?? [])];
  if (!cas.length) return opts;
  if (!opts)
    throw new ConfigError(
      'config.authentication: x509 and frontProxy need TLS: set config.serving (certFile and keyFile)',
    );
  // verified against these roots; not required: bearer-token callers present no certificate
  return { ...opts, requestCert: true, rejectUnauthorized: false, ca: cas.map((c) => c.toString()) };
}

function chainsTo(peer: DetailedPeerCertificate, roots: X509Certificate[]): boolean {
  let cur: DetailedPeerCertificate | undefined = peer;
  for (let depth = 0; cur && depth < 8; depth++) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(cur.raw);
    } catch {
      return false;
    }
    if (roots.some((r) => cert.checkIssued(r) && cert.verify(r.publicKey))) return true;
    const next: DetailedPeerCertificate | undefined = cur.issuerCertificate;
    if (!next || next === cur || next.fingerprint256 === cur.fingerprint256) return false;
    cur = next;
  }
  return false;
}

function asList(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** What a verified peer certificate says, or undefined when there is none or it does not verify. */
function clientCertificateOf(socket: TLSSocket, bundles: Bundles): ClientCertificate | undefined {
  if (!socket.authorized) return undefined;
  const peer = socket.getPeerCertificate(true);
  if (!peer?.raw) return undefined;
  const leaf = new X509Certificate(peer.raw);
  const eku = leaf.keyUsage; // extended key usages; undefined when the certificate names none
  if (eku && !eku.includes(CLIENT_AUTH_EKU)) return undefined;
  const now = Date.now();
  if (now < Date.parse(leaf.validFrom) || now > Date.parse(leaf.validTo)) return undefined;
  const trustedBy: Array<'x509' | 'frontProxy'> = [];
  if (bundles.x509 && chainsTo(peer, bundles.x509)) trustedBy.push('x509');
  if (bundles.frontProxy && chainsTo(peer, bundles.frontProxy)) trustedBy.push('frontProxy');
  if (!trustedBy.length) return undefined;
  return {
    commonName: asList(peer.subject?.CN)[0] ?? '',
    organizations: asList(peer.subject?.O),
    trustedBy,
    fingerprint256: peer.fingerprint256,
  };
}

/**
 * Builds each request's TransportFacts. A connection's certificate is verified once and remembered for
 * the connection's life (keep-alive requests reuse it).
 */
/**
 * A header's lines as `IncomingMessage#headersDistinct[name]` gives them (`name` lowercased), read from the
 * raw lines: headersDistinct builds its object of every header on first use, per request.
 */
export function headerLines(raw: readonly string[], name: string): string[] | undefined {
  let out: string[] | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length !== name.length || raw[i]!.toLowerCase() !== name) continue;
    out ??= [];
    out.push(raw[i + 1]!);
  }
  return out;
}

export function transportFactsFor(config: FleetConfig): (incoming: IncomingMessage) => TransportFacts {
  const bundles = bundlesOf(config);
  const perSocket = new WeakMap<TLSSocket, ClientCertificate | null>();
  const tlsAuth = !!(bundles.x509 || bundles.frontProxy);
  return (incoming) => {
    const facts: TransportFacts = { headerLines: (name) => headerLines(incoming.rawHeaders, name) };
    const socket = incoming.socket as TLSSocket;
    if (tlsAuth && socket.encrypted) {
      let cert = perSocket.get(socket);
      if (cert === undefined) {
        cert = clientCertificateOf(socket, bundles) ?? null;
        perSocket.set(socket, cert);
      }
      if (cert) facts.clientCertificate = cert;
    }
    return facts;
  };
}
