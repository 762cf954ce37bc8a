/**
 * @kubernetes/client-node pointed at a fleet URL, as a user's kubeconfig would (over plain HTTP the
 * client insists on skipTLSVerify, which means nothing for http://; with `tls`, the fleet's CA is trusted
 * and the client certificate presented, as against the real bed).
 */
import * as k8s from '@kubernetes/client-node';

export interface ClientTLS {
  /** PEM of the CA the server's certificate is checked against */
  ca: string;
  /** a client certificate, or a bearer token */
  cert?: string;
  key?: string;
  token?: string;
}

export function clientNode(server: string, tls?: ClientTLS): { kc: k8s.KubeConfig; core: k8s.CoreV1Api } {
  const kc = new k8s.KubeConfig();
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  kc.loadFromOptions({
    clusters: [
      tls ? { name: 'fleet', server, caData: b64(tls.ca) } : { name: 'fleet', server, skipTLSVerify: true },
    ],
    users: [
      tls?.token
        ? { name: 'u', token: tls.token }
        : tls?.cert && tls.key
          ? { name: 'u', certData: b64(tls.cert), keyData: b64(tls.key) }
          : { name: 'u' },
    ],
    contexts: [{ name: 'fleet', cluster: 'fleet', user: 'u' }],
    currentContext: 'fleet',
  });
  return { kc, core: kc.makeApiClient(k8s.CoreV1Api) };
}
