/**
 * Reads a standard kubeconfig (YAML or JSON) and picks one context's cluster and user, turning them into
 * the fleet's endpoint fields. Relative file paths inside a kubeconfig are relative to the kubeconfig's
 * own folder, as kubectl resolves them.
 */
import { parseYaml } from '../util/yaml.ts';
import { ConfigError, type Endpoint } from './schema.ts';

interface NamedEntry<T> {
  name: string;
  [k: string]: unknown;
  cluster?: T;
  user?: T;
  context?: T;
}

export function endpointFromKubeconfig(
  text: string,
  opts: { context?: string; baseDir?: string; where: string },
): Endpoint {
  let doc: any;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new ConfigError(`${opts.where}: not a valid kubeconfig: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object') throw new ConfigError(`${opts.where}: not a valid kubeconfig`);
  const ctxName = opts.context ?? doc['current-context'];
  if (!ctxName) throw new ConfigError(`${opts.where}.context: kubeconfig has no current-context; name one`);
  const find = (list: unknown, name: string, what: string): Record<string, any> => {
    const e = (Array.isArray(list) ? (list as NamedEntry<Record<string, any>>[]) : []).find(
      (x) => x?.name === name,
    );
    const body = e?.[what as 'cluster' | 'user' | 'context'];
    if (!body) throw new ConfigError(`${opts.where}: kubeconfig has no ${what} named "${name}"`);
    return body;
  };
  const ctx = find(doc.contexts, ctxName, 'context');
  const cluster = find(doc.clusters, ctx.cluster, 'cluster');
  const user = ctx.user ? find(doc.users, ctx.user, 'user') : {};
  if (user.exec || user['auth-provider'])
    throw new ConfigError(
      `${opts.where}: user "${ctx.user}" uses exec/auth-provider credentials, which the fleet cannot run; use a token, tokenFile or client certificate`,
    );
  const rel = (p: string | undefined) =>
    p && opts.baseDir && !p.startsWith('/') ? `${opts.baseDir.replace(/\/$/, '')}/${p}` : p;
  const out: Record<string, unknown> = {
    server: cluster.server,
    certificateAuthority: rel(cluster['certificate-authority']),
    certificateAuthorityData: cluster['certificate-authority-data'],
    insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'],
    clientCertificate: rel(user['client-certificate']),
    clientCertificateData: user['client-certificate-data'],
    clientKey: rel(user['client-key']),
    clientKeyData: user['client-key-data'],
    token: user.token,
    tokenFile: rel(user.tokenFile),
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out as Endpoint;
}
