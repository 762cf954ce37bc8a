/**
 * The fleet as one Hono app, built in one readable place like kube-apiserver's DefaultBuildHandlerChain:
 *
 *   probes (/healthz, /livez, /readyz) | limits → request info → metrics → authentication → audit →
 *   body intake → impersonation → authorization → route   (recovery, the app's onError, wherever a
 *   throw happens)
 *
 * Each filter is one small file in src/middleware/, registered with `app.use` in that order; the routes
 * are on Hono's router. This module uses only Web-standard APIs: the same app answers on Node
 * (deploy/node, through @hono/node-server) and in workerd (src/worker.ts), and it can be mounted in
 * another Hono app under a prefix (`outer.route('/k8s', createApp(deps))`), behind that app's own
 * middleware (a JWT check, CORS, tracing): the request info filter reads the path below the prefix.
 */
import { Hono } from 'hono';
import { AuditLog } from './auth/audit.ts';
import { assertCanAdmit, buildAuthn } from './auth/authenticator.ts';
import { failure, statusResponse } from './kube/status.ts';
import { audit } from './middleware/audit/index.ts';
import { authentication } from './middleware/authn/index.ts';
import { authorization } from './middleware/authz/index.ts';
import { middleware } from './middleware/filter.ts';
import { impersonation } from './middleware/impersonation/index.ts';
import { bodyIntake, limits } from './middleware/limits/index.ts';
import { requestMetrics } from './middleware/metrics/index.ts';
import { recovery } from './middleware/recovery/index.ts';
import { requestInfo } from './middleware/requestinfo/index.ts';
import { healthz, live, ready } from './routes/health.ts';
import { fleetRoute } from './routes/index.ts';
import { metricsRoute } from './routes/metrics.ts';
import { passthrough } from './routes/passthrough.ts';
import { clustersApi, statusPage } from './routes/status/index.ts';
import type { FleetDeps, FleetEnv } from './types.ts';

/** The fleet's app: `fetch` for the runtimes, `route()` for an app that mounts it. */
export type FleetApp = Hono<FleetEnv>;

export function createApp(deps: FleetDeps): FleetApp {
  const app = new Hono<FleetEnv>();
  // kube's WithPanicRecovery: any throw or rejection becomes a Status where it happens
  app.onError(recovery);
  app.notFound(() =>
    statusResponse(failure(404, 'NotFound', 'the server could not find the requested resource')),
  );

  // the probes answer before the filters, as kube-apiserver's do (no limits, no authentication)
  app.get('/healthz', healthz);
  app.get('/livez', live);
  app.get('/readyz', (c) => ready(c, deps));

  // identity and hardening (src/auth/, README "Security"): limits before anything parses the request
  const authn = buildAuthn(deps.config.authentication);
  assertCanAdmit(authn);
  const auditLog = new AuditLog(deps.config.audit.enabled);
  const filters = [
    limits(deps.config.limits, { intakeAfterAuthentication: true }),
    requestInfo(),
    requestMetrics(deps.metrics),
    authentication(authn, auditLog),
    audit(auditLog),
    // a body of unknown length is read (bounded, timed) only once the caller is known
    bodyIntake(deps.config.limits),
    impersonation(deps, authn),
    authorization(deps.config.authorization),
  ];
  // in that order; a filter that is off (no metrics, no audit log, no policy) is none and not registered:
  // each one Hono runs is a step of its own per request
  for (const f of filters) if (f) app.use(middleware(f));

  // the fleet's own endpoints (kube's /metrics, protected like it, and the status page), then the API
  app.get('/metrics', (c) => metricsRoute(c, deps));
  app.get('/fleet', (c) => c.redirect(`${new URL(c.req.url).pathname}/`, 301));
  app.get('/fleet/', () => statusPage());
  app.get('/fleet/api/clusters', clustersApi);
  app.all('*', (c) => {
    const info = c.get('info');
    // this request's deps: `client` is bound to the caller's upstream identity (middleware/impersonation)
    const deps = c.get('deps');
    // /clusterspaces/<one cluster>/… is a transparent proxy; everything else is the fleet view
    if (info.clusterspaceForm === 'prefix' && info.clusterspace !== 'all') return passthrough(c, deps, info);
    return fleetRoute(c, deps, info);
  });
  return app;
}
