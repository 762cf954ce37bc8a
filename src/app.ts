/**
 * The fleet's request pipeline, built in one readable place like kube-apiserver's DefaultBuildHandlerChain:
 *
 *   probes (/healthz, /livez, /readyz) | limits → request info → metrics → [authentication → audit →
 *   body intake → impersonation → authorization] → route   (recovery wherever a throw happens)
 *
 * Each bracketed filter is one small middleware in src/middleware/ (authn, audit, impersonation, authz);
 * request limits (src/middleware/limits) run before the request is parsed.
 * This module uses only Web-standard APIs: the same app answers on Node (deploy/node) and in workerd
 * (src/worker.ts).
 */
import { Context, type ExecutionContext } from 'hono';
import { getPath } from 'hono/utils/url';
import { AuditLog } from './auth/audit.ts';
import { assertCanAdmit, buildAuthn } from './auth/authenticator.ts';
import { failure, statusResponse } from './kube/status.ts';
import { audit } from './middleware/audit/index.ts';
import { authentication } from './middleware/authn/index.ts';
import { authorization } from './middleware/authz/index.ts';
import { chain, type Handler, neverRejects } from './middleware/chain.ts';
import { impersonation } from './middleware/impersonation/index.ts';
import { bodyIntake, limits } from './middleware/limits/index.ts';
import { requestMetrics } from './middleware/metrics/index.ts';
import { recovery } from './middleware/recovery/index.ts';
import { requestInfo } from './middleware/requestinfo/index.ts';
import { ExactRouter } from './router.ts';
import { healthz, live, ready } from './routes/health.ts';
import { fleetRoute } from './routes/index.ts';
import { metricsRoute } from './routes/metrics.ts';
import { passthrough } from './routes/passthrough.ts';
import { clustersApi, statusPage } from './routes/status/index.ts';
import type { FleetDeps, FleetEnv } from './types.ts';

/** The app as the runtimes call it (deploy/node/server.ts, src/worker.ts): a fetch handler. */
export interface FleetApp {
  fetch(request: Request, env?: unknown, executionCtx?: ExecutionContext): Response | Promise<Response>;
}

const notFound = () =>
  statusResponse(failure(404, 'NotFound', 'the server could not find the requested resource'));

/**
 * The request's hono Context, handed to the probes' route or the chain: hono's application class is not
 * used (its mounting, composition, router and event helpers were ≈ 5 KiB of the worker bundle, issue 16,
 * and the app has one handler): what it did for this app is here. HEAD is answered as GET without a
 * body; a throw or rejection that got past the chain's recovery (it catches its own) is still a Status.
 */
export function dispatcher(probes: ExactRouter<Handler>, handler: Handler): FleetApp {
  const safeHandler = neverRejects(handler);
  const dispatch = (request: Request, method: string, env: unknown, executionCtx?: ExecutionContext) => {
    const path = getPath(request);
    const c = new Context<FleetEnv>(request, {
      path,
      env,
      executionCtx,
      notFoundHandler: notFound,
    });
    const route = probes.first(method, path) ?? handler;
    try {
      const res = route(c);
      // a chain answers its own throws and rejections (src/middleware/chain.ts): its promise is passed on
      // as it is, without a catch (a closure, a promise and a microtask per request) of this level
      if (route === handler && safeHandler) return res;
      return res instanceof Promise ? res.catch((err: unknown) => recovery(err as Error, c)) : res;
    } catch (err) {
      return recovery(err as Error, c);
    }
  };
  return {
    fetch(request, env, executionCtx) {
      if (request.method !== 'HEAD') return dispatch(request, request.method, env, executionCtx);
      return (async () => new Response(null, await dispatch(request, 'GET', env, executionCtx)))();
    },
  };
}

export function createApp(deps: FleetDeps): FleetApp {
  // the probes answer before the chain, as kube-apiserver's do (no limits, no authentication)
  const probes = new ExactRouter<Handler>();
  probes.add('GET', '/healthz', healthz);
  probes.add('GET', '/livez', live);
  probes.add('GET', '/readyz', (c) => ready(c, deps));

  // the fleet's own endpoints (kube's /metrics, protected like it, and the status page), then the API
  const routes = new ExactRouter<Handler>();
  routes.add('GET', '/metrics', (c) => metricsRoute(c, deps));
  routes.add('GET', '/fleet', (c) => c.redirect(`${new URL(c.req.url).pathname}/`, 301));
  routes.add('GET', '/fleet/', () => statusPage());
  routes.add('GET', '/fleet/api/clusters', clustersApi);
  routes.add('ALL', '/*', (c) => {
    const info = c.get('info');
    // this request's deps: `client` is bound to the caller's upstream identity (middleware/impersonation)
    const deps = c.get('deps');
    // /clusterspaces/<one cluster>/… is a transparent proxy; everything else is the fleet view
    if (info.clusterspaceForm === 'prefix' && info.clusterspace !== 'all') return passthrough(c, deps, info);
    return fleetRoute(c, deps, info);
  });

  // identity and hardening (src/auth/, README "Security"): limits before anything parses the request
  const authn = buildAuthn(deps.config.authentication);
  assertCanAdmit(authn);
  const auditLog = new AuditLog(deps.config.audit.enabled);
  const handler = chain(
    [
      limits(deps.config.limits, { intakeAfterAuthentication: true }),
      requestInfo,
      requestMetrics(deps.metrics),
      authentication(authn, auditLog),
      audit(auditLog),
      // a body of unknown length is read (bounded, timed) only once the caller is known
      bodyIntake(deps.config.limits),
      impersonation(deps, authn),
      authorization(deps.config.authorization),
    ],
    // HEAD is routed as GET (as hono routes it)
    (c) => routes.first(c.req.method === 'HEAD' ? 'GET' : c.req.method, c.req.path)!(c),
  );
  return dispatcher(probes, handler);
}
