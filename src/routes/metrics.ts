/**
 * `GET /metrics`, protected like kube-apiserver's: with `metrics.access: authorized` (the default) the
 * caller must be allowed `get` on the non-resource URL `/metrics` by the control plane — asked as the
 * caller (a SelfSubjectAccessReview through the request's bound client), so the fleet needs no right of
 * its own and the answer is the one kube-apiserver would give that caller.
 *
 * The text is this process's registry, or, where the runtime runs several processes on one port (Node
 * with --workers), the sum over all of them through the metrics' `source` (see src/metrics/cluster.ts).
 */
import type { Context } from 'hono';
import { forbidden } from '../auth/forbidden.ts';
import { failure, statusResponse } from '../kube/status.ts';
import { EXPOSITION_CONTENT_TYPE } from '../metrics/registry.ts';
import type { FleetDeps, FleetEnv } from '../types.ts';

const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';

export async function metricsRoute(c: Context<FleetEnv>, deps: FleetDeps): Promise<Response> {
  const access = deps.config.metrics.access;
  if (access === 'off' || !deps.metrics)
    return statusResponse(failure(404, 'NotFound', 'the server could not find the requested resource'));
  const user = c.get('identity') ?? c.get('user');
  if (access === 'authorized') {
    const allowed = await reviewMetrics(c.get('deps'), c.req.raw.signal);
    if (allowed !== true) {
      c.set('refusal', `metrics: ${allowed}`);
      return statusResponse(forbidden({ user: user.user, verb: 'get', path: '/metrics' }, allowed));
    }
  }
  let text: string;
  try {
    text = deps.metrics.source ? await deps.metrics.source() : deps.metrics.expose();
  } catch (e) {
    // one process's figures alone would look like a counter reset to Prometheus: fail the scrape instead
    return statusResponse(
      failure(
        503,
        'ServiceUnavailable',
        `the metrics of the server's processes could not be gathered: ${(e as Error).message}`,
      ),
    );
  }
  return new Response(text, {
    headers: { 'Content-Type': EXPOSITION_CONTENT_TYPE, 'Cache-Control': 'no-store' },
  });
}

/** true, or why not */
async function reviewMetrics(deps: FleetDeps, signal: AbortSignal): Promise<true | string> {
  const body = JSON.stringify({
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { nonResourceAttributes: { path: '/metrics', verb: 'get' } },
  });
  try {
    const res = await deps.client.send(deps.membership.controlPlane, {
      method: 'POST',
      path: SSAR,
      headers: new Headers({ 'Content-Type': 'application/json', Accept: 'application/json' }),
      body,
      signal,
    });
    const review = (await res.json().catch(() => undefined)) as
      | { status?: { allowed?: boolean; denied?: boolean; reason?: string } }
      | undefined;
    if (!res.ok) return `the control plane could not review the request (${res.status})`;
    const st = review?.status;
    if (st?.allowed === true && st.denied !== true) return true;
    return st?.reason || 'the control plane does not allow it';
  } catch {
    return 'the control plane could not be asked';
  }
}
