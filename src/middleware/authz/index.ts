/**
 * Authorization by the optional fleet policy (src/auth/policy.ts), on the identity the request acts as,
 * after impersonation, as kube-apiserver's WithAuthorization. Without a policy every request passes and
 * each cluster's RBAC decides; a denial is a 403 Status in kube-apiserver's words, and nothing is sent to
 * any cluster.
 */
import { type Attributes, forbidden } from '../../auth/forbidden.ts';
import type { Identity } from '../../auth/identity.ts';
import { FleetPolicy } from '../../auth/policy.ts';
import type { PolicyConfig } from '../../config/security.ts';
import { statusResponse } from '../../kube/status.ts';
import type { RequestInfo } from '../../request/info.ts';
import type { Filter } from '../filter.ts';

export function attributesOf(info: RequestInfo, who: Identity): Attributes {
  if (!info.isResourceRequest) return { user: who.user, verb: info.verb, path: info.kubePath };
  return {
    user: who.user,
    verb: info.verb,
    resource: info.resource,
    apiGroup: info.apiGroup,
    ...(info.subresource ? { subresource: info.subresource } : {}),
    ...(info.namespace ? { namespace: info.namespace } : {}),
    ...(info.name ? { name: info.name } : {}),
  };
}

/** The policy filter; none without a policy (every request passes, each cluster's RBAC decides). */
export function authorization(config: PolicyConfig | undefined): Filter | undefined {
  const policy = new FleetPolicy(config);
  if (!policy.enabled) return undefined;
  return (c, next) => {
    const info = c.get('info');
    const who = c.get('identity');
    const d = policy.decide(who, info.clusterspace ?? 'all', info.verb);
    if (!d.allowed) {
      c.set('refusal', `policy: ${d.reason}`);
      return statusResponse(forbidden(attributesOf(info, who), d.reason));
    }
    return next();
  };
}
