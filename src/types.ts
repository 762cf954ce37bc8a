/**
 * Types shared across the fleet's folders, in one leaf (as Hono's `types.ts`): the request-scoped
 * variables the middleware chain sets and the routes read, and what a request may use of the fleet.
 * Imports only types, so any folder may import it without pulling in code or closing a circle.
 */
import type { ClusterCall } from './auth/audit.ts';
import type { Identity, UpstreamIdentity } from './auth/identity.ts';
import type { FleetConfig } from './config/schema.ts';
import type { FleetMetrics } from './metrics/fleet.ts';
import type { RequestInfo } from './request/info.ts';
import type { UpstreamClient } from './upstreams/client.ts';
import type { Membership } from './upstreams/membership.ts';

/** The fleet's own relay entrypoint (a Workers service binding): one framed request, one framed answer. */
export type RelayFetcher = (req: Request) => Promise<Response>;

export interface FleetDeps {
  config: FleetConfig;
  membership: Membership;
  client: UpstreamClient;
  /** this process's (Node) or isolate's (Workers) figures, served at /metrics */
  metrics?: FleetMetrics;
  /** gzip large merged answers here (Node) or leave it to the runtime (Workers) */
  gzipResponses: boolean;
  /** simultaneous upstream connections one request may hold (Workers: 6); wider fan-outs use `relay` */
  maxConnectionsPerRequest: number;
  /** the fleet's own relay entrypoint (Workers service binding), for fan-outs wider than the budget */
  relay?: RelayFetcher;
  /** clusters one request may ask at most (upstreams/relay/plan.ts); unbounded when absent */
  maxClustersPerRequest?: number;
}

/**
 * What asking clusters needs (src/upstreams/fanout.ts `fanOut`): the bound client, the connection budget
 * and the relay that serves fan-outs wider than it.
 */
export type FanOutDeps = Pick<
  FleetDeps,
  'client' | 'maxConnectionsPerRequest' | 'relay' | 'metrics' | 'maxClustersPerRequest'
>;

/** What knowing the fleet's clusters needs (`fleetTargets`, `fleetMembership`, `clusterspaceTargets`). */
export interface ClustersDeps {
  membership: Membership;
  config: Pick<FleetConfig, 'federation'>;
}

/** How merged answers look and fail: the fleet view (federation) and strict mode. */
export interface ViewDeps {
  config: Pick<FleetConfig, 'federation' | 'strict'>;
}

/** What one-cluster requests need: the bound client and where the clusters are. */
export type ClientDeps = Pick<FleetDeps, 'client' | 'membership'>;

/** Set by middleware/requestinfo: the path parsed once. */
export type InfoVariables = { info: RequestInfo };

/** Set by middleware/authn. */
export type AuthnVariables = {
  /** the authenticated caller */
  user: Identity;
  /** how: `oidc:<issuer>`, `x509`, …; and the bearer token when a token authenticated the caller */
  authn: { via: string; bearer?: string };
  /** when the request arrived (ms since the epoch, and a monotonic mark for latency) */
  received: { at: number; mark: number };
};

/** Set by middleware/audit and the filters that refuse. */
export type AuditVariables = {
  /** every upstream answer of this request (cluster, code) */
  auditCalls: ClusterCall[];
  /** why a filter of the fleet refused the request */
  refusal: string;
};

/** Set by middleware/impersonation. */
export type ImpersonationVariables = {
  /** the identity this request acts as: the caller, or whom the caller may impersonate */
  identity: Identity;
  /** what goes upstream for it */
  upstream: UpstreamIdentity;
  /** the fleet as this request may use it: `client` is bound to `upstream` */
  deps: FleetDeps;
};

export type FleetEnv = {
  Variables: InfoVariables & AuthnVariables & AuditVariables & ImpersonationVariables;
};
