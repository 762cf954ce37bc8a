/**
 * Authentication, like kube-apiserver's WithAuthentication: the configured authenticators (src/auth/
 * authenticator.ts) say who the caller is; nobody → 401 Unauthorized Status with `WWW-Authenticate`,
 * and nothing is sent to any cluster. The reason goes to the log and the audit line, never to the caller.
 * An outcome known at once (anonymous access, a client certificate) passes the request on without a
 * promise of its own.
 */

import type { Context, Next } from 'hono';
import type { AuditLog } from '../../auth/audit.ts';
import type { Authn, AuthnOutcome } from '../../auth/authenticator.ts';
import { unauthorizedResponse } from '../../auth/forbidden.ts';
import { transportFacts } from '../../auth/request.ts';
import type { FleetEnv } from '../../types.ts';
import { auditRefusal } from '../audit/index.ts';
import type { Filter, FilterAnswer } from '../filter.ts';

export function authentication(authn: Authn, audit: AuditLog): Filter {
  const decided = (c: Context<FleetEnv>, next: Next, r: AuthnOutcome): Response | Promise<void> => {
    if (!r.ok) {
      console.warn(`fleet: unable to authenticate the request: ${r.reason}`);
      const res = unauthorizedResponse(r.tokenPresented);
      auditRefusal(c, audit, 401, `authentication: ${r.reason}`);
      return res;
    }
    c.set('user', r.identity);
    c.set('authn', r.bearer !== undefined ? { via: r.via, bearer: r.bearer } : { via: r.via });
    return next();
  };
  return (c, next) => {
    // when it arrived: the audit line's (nobody else reads it)
    if (audit.enabled) c.set('received', { at: Date.now(), mark: performance.now() });
    const r = authn.authenticate({ headers: c.req.raw.headers, facts: transportFacts(c.env) });
    return r instanceof Promise ? r.then((o): FilterAnswer => decided(c, next, o)) : decided(c, next, r);
  };
}
