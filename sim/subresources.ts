/**
 * Subresources that are requests, not views of the object: `serviceaccounts/<sa>/token` (TokenRequest,
 * `kubectl create token`) and `pods/<pod>/binding` (Binding, what a scheduler posts). Their rules and
 * messages follow pkg/registry/core/serviceaccount/storage/token.go and pkg/registry/core/pod/storage.
 */

import type { KubeObject } from './catalog/types.ts';
import { StatusError } from './http.ts';
import { timestamp } from './objects.ts';
import { badRequest, conflict, invalid } from './status.ts';

type Obj = KubeObject & Record<string, any>;

/** The API server's own audience when a TokenRequest names none (kube's --api-audiences default). */
export const DEFAULT_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';

function b64url(s: string): string {
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * The TokenRequest answered for service account `sa`: spec defaulted (audiences, expirationSeconds 3600),
 * status.token a JWT with the claims kube's serviceaccount.Claims puts in (unsigned: nobody here verifies
 * it), status.expirationTimestamp. Invalid durations are kube's 422s.
 */
export function issueToken(sa: Obj, body: Obj, now: Date, issuer: string): Obj {
  const name = sa.metadata.name!;
  const spec = { ...(body.spec ?? {}) };
  const secs = spec.expirationSeconds ?? 3600;
  const causes: { reason: string; message: string; field: string }[] = [];
  if (typeof secs !== 'number' || secs < 600)
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${secs}: may not specify a duration less than 10 minutes`,
      field: 'spec.expirationSeconds',
    });
  else if (secs > 2 ** 32)
    causes.push({
      reason: 'FieldValueTooLong',
      message: `Too long: may not specify a duration larger than 2^32 seconds`,
      field: 'spec.expirationSeconds',
    });
  if (causes.length) throw new StatusError(invalid('TokenRequest', 'authentication.k8s.io', name, causes));
  spec.expirationSeconds = secs;
  if (!Array.isArray(spec.audiences) || spec.audiences.length === 0) spec.audiences = [DEFAULT_AUDIENCE];
  spec.boundObjectRef ??= null;
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + secs;
  const ns = sa.metadata.namespace!;
  const claims = {
    aud: spec.audiences,
    exp,
    iat,
    iss: issuer,
    jti: crypto.randomUUID(),
    'kubernetes.io': {
      namespace: ns,
      serviceaccount: { name, uid: sa.metadata.uid },
    },
    nbf: iat,
    sub: `system:serviceaccount:${ns}:${name}`,
  };
  const header = { alg: 'RS256', kid: 'sim' };
  const sig = b64url(crypto.randomUUID());
  const token = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}.${sig}`;
  return {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace: ns, creationTimestamp: timestamp(now) },
    spec,
    status: { token, expirationTimestamp: timestamp(new Date(exp * 1000)) },
  };
}

/**
 * The pod after a Binding: spec.nodeName set to the target node. A pod already on a node is kube's 409
 * ("pod x is already assigned to node y"); a target that is not a Node, or a missing one, a 400/422.
 */
export function bindPod(pod: Obj, binding: Obj): Obj {
  const name = pod.metadata.name!;
  if (binding.metadata?.name && binding.metadata.name !== name) {
    throw new StatusError(
      badRequest(
        `the name of the object (${binding.metadata.name}) does not match the name on the URL (${name})`,
      ),
    );
  }
  const target = binding.target ?? {};
  if (target.kind && target.kind !== 'Node')
    throw new StatusError(badRequest('only nodes are supported as binding targets'));
  if (!target.name)
    throw new StatusError(
      invalid('Binding', '', name, [
        { reason: 'FieldValueRequired', message: 'Required value', field: 'target.name' },
      ]),
    );
  if (pod.metadata.deletionTimestamp)
    throw new StatusError(
      conflict('pods/binding', '', name, `pod ${name} is being deleted, cannot be assigned to a host`),
    );
  if (pod.spec?.nodeName)
    throw new StatusError(
      conflict('pods/binding', '', name, `pod ${name} is already assigned to node "${pod.spec.nodeName}"`),
    );
  return { ...pod, spec: { ...(pod.spec ?? {}), nodeName: target.name } };
}
