/**
 * @kubernetes/client-node pointed at a fleet URL, as a user's kubeconfig would (over plain HTTP the
 * client insists on skipTLSVerify, which means nothing for http://).
 */
import * as k8s from '@kubernetes/client-node';

export function clientNode(server: string): { kc: k8s.KubeConfig; core: k8s.CoreV1Api } {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fleet', server, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'fleet', cluster: 'fleet', user: 'u' }],
    currentContext: 'fleet',
  });
  return { kc, core: kc.makeApiClient(k8s.CoreV1Api) };
}
