/**
 * The audit log: one JSON line per request, written when the response starts (streams such as watch and
 * `logs -f` are logged once, when they begin). It says who (user, groups, and whom they acted as), what
 * (verb, resource, namespace, name, fleet name), where (clusterspace, every cluster the request touched
 * with the code each answered) and how it ended (code, latency to the response). Tokens, certificates,
 * headers and bodies are never part of it.
 */
import type { Identity } from './identity.ts';

export interface ClusterCall {
  cluster: string;
  /** HTTP status the cluster answered, or 0 when it could not be reached */
  code: number;
}

export interface AuditEvent {
  kind: 'FleetAuditEvent';
  auditID: string;
  /** RFC 3339 time the request arrived */
  requestReceived: string;
  /** how the caller was authenticated: oidc:<issuer>, edge:<issuer>, x509, front-proxy:<cn>, static-token, anonymous */
  authenticator?: string;
  user?: string;
  groups?: string[];
  uid?: string;
  /** the identity the request acted as after `kubectl --as` */
  impersonatedUser?: string;
  impersonatedGroups?: string[];
  verb: string;
  method: string;
  path: string;
  resource?: string;
  subresource?: string;
  apiGroup?: string;
  namespace?: string;
  /** the object's name as the client used it (a fleet name: `<name>.clusterspace.<cluster>`) */
  fleetName?: string;
  /** the plain name in its cluster, when the fleet name carries a cluster */
  name?: string;
  clusterspace: string;
  clusters: ClusterCall[];
  /** the W3C trace id of the caller's `traceparent`, passed on to every cluster */
  traceID?: string;
  code: number;
  /** why the fleet itself refused (authentication, impersonation, policy, limits) */
  reason?: string;
  latencyMs: number;
  userAgent?: string;
}

export type AuditSink = (line: string) => void;

export class AuditLog {
  constructor(
    readonly enabled: boolean,
    private readonly sink: AuditSink = (line) => console.log(line),
  ) {}

  write(e: AuditEvent): void {
    if (!this.enabled) return;
    try {
      this.sink(JSON.stringify(e));
    } catch (err) {
      console.error('fleet: audit: cannot write an event', err);
    }
  }
}

export function identityFields(
  user: Identity | undefined,
  acting: Identity | undefined,
): Pick<AuditEvent, 'user' | 'groups' | 'uid' | 'impersonatedUser' | 'impersonatedGroups'> {
  const out: ReturnType<typeof identityFields> = {};
  if (user) {
    out.user = user.user;
    out.groups = user.groups;
    if (user.uid) out.uid = user.uid;
  }
  if (acting && acting !== user) {
    out.impersonatedUser = acting.user;
    out.impersonatedGroups = acting.groups;
  }
  return out;
}
