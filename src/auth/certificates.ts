/**
 * The authenticators of a TLS client certificate, as kube-apiserver's (pkg/kubeapiserver/authenticator):
 * front-proxy headers (`--requestheader-*`), honoured only from a certificate that chains to the
 * front-proxy CA and, when `allowedNames` is set, has a listed CN; then the certificate itself (x509, CN
 * the user, O the groups). The certificate is the one the runtime verified (TransportFacts, ./request.ts).
 *
 * Node only: the Node server verifies client certificates and links these in (deploy/node/tls.ts,
 * `useCertificateAuthn`); Workers terminate TLS at the edge, so the worker bundles none of this and refuses
 * a configuration that asks for it (config/security.ts).
 */
import type { AuthenticationConfig, FrontProxyConfig } from '../config/security.ts';
import type { CertificateAuthn, Step } from './authenticator.ts';
import { type Identity, withAuthenticatedGroup } from './identity.ts';
import { type AuthnRequest, headerValues } from './request.ts';

function frontProxyStep(cfg: FrontProxyConfig, req: AuthnRequest): Step {
  const cert = req.facts?.clientCertificate;
  if (!cert?.trustedBy.includes('frontProxy')) return { kind: 'none' };
  if (cfg.allowedNames.length > 0 && !cfg.allowedNames.includes(cert.commonName))
    return {
      kind: 'error',
      reason: `front-proxy client certificate CN "${cert.commonName}" is not in allowedNames`,
    };
  let user: string | undefined;
  for (const h of cfg.usernameHeaders) {
    const v = req.headers.get(h)?.trim();
    if (v) {
      user = v;
      break;
    }
  }
  if (!user) return { kind: 'none' };
  const groups = cfg.groupHeaders.flatMap((h) => headerValues(req, h));
  const identity: Identity = { user, groups };
  for (const h of cfg.uidHeaders) {
    const v = req.headers.get(h)?.trim();
    if (v) {
      identity.uid = v;
      break;
    }
  }
  const extra: Record<string, string[]> = {};
  req.headers.forEach((_, name) => {
    for (const prefix of cfg.extraHeaderPrefixes) {
      const p = prefix.toLowerCase();
      if (!name.startsWith(p) || name.length === p.length) continue;
      let key: string;
      try {
        key = decodeURIComponent(name.slice(p.length)).toLowerCase();
      } catch {
        continue;
      }
      extra[key] = [...(extra[key] ?? []), ...headerValues(req, name)];
    }
  });
  if (Object.keys(extra).length) identity.extra = extra;
  return { kind: 'ok', identity: withAuthenticatedGroup(identity), via: `front-proxy:${cert.commonName}` };
}

function x509Step(req: AuthnRequest): Step {
  const cert = req.facts?.clientCertificate;
  if (!cert?.trustedBy.includes('x509')) return { kind: 'none' };
  if (!cert.commonName) return { kind: 'error', reason: 'client certificate has no common name' };
  return {
    kind: 'ok',
    identity: withAuthenticatedGroup({ user: cert.commonName, groups: [...cert.organizations] }),
    via: 'x509',
  };
}

/** The client-certificate authenticators `config` asks for, front-proxy before x509 as kube tries them. */
export const certificateAuthn: CertificateAuthn = (config: AuthenticationConfig) => {
  const fp = config.frontProxy;
  const steps: Array<(req: AuthnRequest) => Step> = [];
  if (fp) steps.push((req) => frontProxyStep(fp, req));
  if (config.x509) steps.push(x509Step);
  const lower = (hs: string[]) => hs.map((h) => h.toLowerCase());
  return {
    steps,
    claimHeaders: fp ? lower([...fp.usernameHeaders, ...fp.uidHeaders, ...fp.groupHeaders]) : [],
    claimHeaderPrefixes: fp ? lower(fp.extraHeaderPrefixes) : [],
  };
};
