/**
 * Impersonation, like kube-apiserver's WithImpersonation, in two halves:
 *
 * 1. The caller's own `Impersonate-*` headers (`kubectl --as`): honoured only after a SubjectAccessReview,
 *    sent with the fleet's own credential to the control plane (or the request's single target cluster),
 *    says the caller may impersonate each thing asked for; otherwise 403 in kube's words. The headers
 *    themselves never travel on (the upstream client strips them).
 * 2. The identity the request then acts as is bound into this request's upstream client: the routes get
 *    `c.var.deps`, whose `client` sends every call — list, get, writes, discovery, passthrough, logs,
 *    watch, upgrades — with that identity (`Impersonate-*` with the fleet's credential, or the caller's
 *    own token in passthrough mode). A route has no client without it, so it cannot forget the caller.
 */
import type { Context, Next } from 'hono';
import type { Authn } from '../../auth/authenticator.ts';
import { forbidden, unauthorizedResponse } from '../../auth/forbidden.ts';
import { ANONYMOUS_USER, type Identity, type UpstreamIdentity } from '../../auth/identity.ts';
import {
  authorizeImpersonation,
  parseImpersonation,
  type RequestedImpersonation,
  type Review,
  ReviewCache,
  subjectAccessReview,
} from '../../auth/impersonate.ts';
import { transportFacts } from '../../auth/request.ts';
import { badRequest, statusResponse } from '../../kube/status.ts';
import type { FleetDeps, FleetEnv } from '../../types.ts';
import type { CallerBinding, UpstreamClient } from '../../upstreams/client.ts';
import type { ResolvedEndpoint } from '../../upstreams/endpoint.ts';
import { parseTraceparent } from '../../util/trace.ts';
import type { Filter, FilterAnswer } from '../filter.ts';

const SAR_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

/** Asks `endpoint` with the fleet's own credential (the unbound client): may `who` do `attrs`? */
function reviewAt(
  client: Pick<UpstreamClient, 'send'>,
  endpoint: ResolvedEndpoint,
  signal: AbortSignal,
): Review {
  return async (who, attrs) => {
    const res = await client.send(endpoint, {
      method: 'POST',
      path: SAR_PATH,
      headers: new Headers({ 'Content-Type': 'application/json', Accept: 'application/json' }),
      body: JSON.stringify(subjectAccessReview(who, attrs)),
      signal,
    });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const why = body?.message ?? text.slice(0, 200);
      console.error(`fleet: SubjectAccessReview on ${endpoint.name} answered ${res.status}: ${why}`);
      return { allowed: false, reason: `the fleet could not review the impersonation on ${endpoint.name}` };
    }
    const st = body?.status ?? {};
    return st.allowed === true && st.denied !== true
      ? { allowed: true }
      : { allowed: false, ...(typeof st.reason === 'string' && st.reason ? { reason: st.reason } : {}) };
  };
}

/**
 * Takes the whole FleetDeps on purpose: this filter is where the per-request copy is made (the same deps
 * with the client bound to the caller), so every route gets exactly the fleet minus the unbound client.
 * A request without `Impersonate-*` headers passes on at once (no promise of this filter's own).
 */
export function impersonation(deps: FleetDeps, authn: Authn): Filter {
  const cfg = deps.config.callerImpersonation;
  const mode = deps.config.upstreamIdentity.mode;
  const cache = new ReviewCache(cfg.cacheSeconds * 1000);

  /** the identity the caller may act as, or the refusal (a SubjectAccessReview decides) */
  async function reviewed(
    c: Context<FleetEnv>,
    user: Identity,
    requested: RequestedImpersonation,
  ): Promise<Identity | Response> {
    let endpoint = deps.membership.controlPlane;
    const cs = c.get('info').clusterspace;
    if (cfg.reviewOn === 'target' && cs !== undefined && cs !== 'all')
      endpoint = (await deps.membership.endpointFor(cs, c.req.raw.signal)) ?? endpoint;
    const review = cache.wrap(endpoint.name, reviewAt(deps.client, endpoint, c.req.raw.signal));
    const r = await authorizeImpersonation(user, requested, review);
    if (!r.ok) {
      c.set('refusal', `impersonation: ${r.status.message}`);
      return statusResponse(r.status);
    }
    return r.identity;
  }

  /** binds the request's upstream client to `acting` and passes the request on */
  function bound(
    c: Context<FleetEnv>,
    next: Next,
    user: Identity,
    acting: Identity,
  ): Response | Promise<void> {
    let upstream: UpstreamIdentity;
    if (mode === 'passthrough') {
      const bearer = c.get('authn').bearer;
      if (bearer === undefined && user.user !== ANONYMOUS_USER) {
        // the clusters would see an anonymous request: refuse rather than silently downgrade
        console.warn(
          `fleet: passthrough mode needs the caller's bearer token; ${user.user} authenticated by ${c.get('authn').via}`,
        );
        c.set('refusal', 'passthrough mode: the caller presented no bearer token to forward');
        return unauthorizedResponse(false);
      }
      upstream = {
        mode: 'passthrough',
        ...(bearer !== undefined ? { authorization: `Bearer ${bearer}` } : {}),
        ...(acting !== user ? { impersonate: acting } : {}),
      };
    } else {
      upstream = { mode: 'impersonate', identity: acting };
    }
    c.set('identity', acting);
    c.set('upstream', upstream);
    const calls = c.get('auditCalls');
    const trace = parseTraceparent(c.req.header('traceparent'));
    // fields set only when there is something to say (not spread from an empty object per request)
    const binding: CallerBinding = {
      as: upstream,
      dropHeaders: authn.credentialHeaders,
      dropHeaderPrefixes: authn.credentialHeaderPrefixes,
    };
    if (calls) binding.onAnswer = (cluster: string, code: number) => calls.push({ cluster, code });
    if (trace) binding.traceparent = trace.header;
    c.set('deps', { ...deps, client: deps.client.forCaller(binding) });
    return next();
  }

  return (c, next) => {
    const user = c.get('user');
    const parsed = parseImpersonation({ headers: c.req.raw.headers, facts: transportFacts(c.env) });
    if (parsed.kind === 'none') return bound(c, next, user, user);
    if (parsed.kind === 'invalid') {
      c.set('refusal', `impersonation: ${parsed.message}`);
      return statusResponse(badRequest(parsed.message));
    }
    if (!cfg.enabled) {
      const reason = 'impersonation through the fleet is disabled (callerImpersonation.enabled: false)';
      c.set('refusal', reason);
      return statusResponse(
        forbidden(
          { user: user.user, verb: 'impersonate', resource: 'users', name: parsed.requested.user },
          reason,
        ),
      );
    }
    return reviewed(c, user, parsed.requested).then(
      (acting): FilterAnswer => (acting instanceof Response ? acting : bound(c, next, user, acting)),
    );
  };
}
