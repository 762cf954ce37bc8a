/**
 * Audit, after authentication as in kube-apiserver's chain: one structured line per request, written when
 * the response starts (src/auth/audit.ts says what is in it and what never is). Clusters touched are
 * collected by the request's upstream client (see ../impersonation), refusals by the filter that refused.
 */
import type { Context } from 'hono';
import { type AuditEvent, type AuditLog, identityFields } from '../../auth/audit.ts';
import { decodeName } from '../../merge/names/index.ts';
import type { FleetEnv } from '../../types.ts';
import { parseTraceparent } from '../../util/trace.ts';
import { afterAnswer, type Filter } from '../filter.ts';

function event(c: Context<FleetEnv>, code: number): AuditEvent {
  const info = c.get('info');
  const received = c.get('received') ?? { at: Date.now(), mark: performance.now() };
  const url = new URL(c.req.url);
  const e: AuditEvent = {
    kind: 'FleetAuditEvent',
    auditID: crypto.randomUUID(),
    requestReceived: new Date(received.at).toISOString(),
    ...(c.get('authn') ? { authenticator: c.get('authn').via } : {}),
    ...identityFields(c.get('user'), c.get('identity')),
    verb: info?.verb ?? c.req.method.toLowerCase(),
    method: c.req.method,
    path: url.pathname,
    clusterspace: info?.clusterspace ?? 'all',
    clusters: c.get('auditCalls') ?? [],
    code,
    latencyMs: Math.round((performance.now() - received.mark) * 1000) / 1000,
  };
  if (info?.isResourceRequest) {
    e.resource = info.resource;
    if (info.subresource) e.subresource = info.subresource;
    e.apiGroup = info.apiGroup;
    if (info.namespace) e.namespace = info.namespace;
    if (info.name) {
      e.fleetName = info.name;
      const d = decodeName(info.name);
      if (d.cluster !== undefined) e.name = d.name;
    }
  }
  const refusal = c.get('refusal');
  if (refusal) e.reason = refusal;
  const trace = parseTraceparent(c.req.header('traceparent'));
  if (trace) e.traceID = trace.traceId;
  const ua = c.req.header('user-agent');
  if (ua) e.userAgent = ua.slice(0, 256);
  return e;
}

/** For filters that answer before the audit filter runs (authentication). */
export function auditRefusal(c: Context<FleetEnv>, log: AuditLog, code: number, reason: string): void {
  if (!log.enabled) return;
  c.set('refusal', reason);
  log.write(event(c, code));
}

/** The audit filter; none when the log is off (nothing to register). */
export function audit(log: AuditLog): Filter | undefined {
  if (!log.enabled) return undefined;
  return (c, next) => {
    c.set('auditCalls', []);
    // a throw below has already become a Status (the app's onError runs where it was thrown)
    return afterAnswer(c, next(), (res) => {
      log.write(event(c, res.status));
      return res;
    });
  };
}
