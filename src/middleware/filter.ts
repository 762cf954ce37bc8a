/**
 * The fleet's filters, one small file per filter in this folder, each registered with Hono's `app.use`
 * in kube-apiserver's DefaultBuildHandlerChain order (src/app.ts). A filter is handed the request and the
 * rest of the chain, and answers:
 *
 *   - it refuses: it returns its answer and the rest never runs;
 *   - it passes the request on: it returns `next(c)`;
 *   - it has work to do once the answer is known (metrics, audit, limits): {@link afterAnswer}.
 *
 * That is Hono's own middleware contract written as a function from the request to its answer (what
 * kube's filters are), so that a filter reads as "refuse, or the answer of the rest, maybe changed";
 * {@link middleware} makes it a Hono middleware. Recovery (kube's WithPanicRecovery) is the app's
 * `onError`: Hono turns a throw or a rejection into its Status where it happens (`c.error` holds the
 * error), and every filter before it sees an answer as for any refusal (counted, audited, mapped by
 * limits).
 */
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { FleetEnv } from '../types.ts';

/** An answer, now or to come. */
export type Answer = Response | Promise<Response>;
export type Handler = (c: Context<FleetEnv>) => Answer;
export type Filter = (c: Context<FleetEnv>, next: Handler) => Answer;

/** `then(answer)`, at once for an answer already there. */
export function afterAnswer(answer: Answer, then: (res: Response) => Answer): Answer {
  return answer instanceof Promise ? answer.then(then) : then(answer);
}

/**
 * `filter` as a Hono middleware: `next` runs the rest of the app (its answer is then `c.res`); a refusal,
 * or an answer the filter changed, becomes the request's answer. Set whole, not merged: Hono's `c.res`
 * setter copies the old answer's headers into a new one, and a refusal must not carry the route's. A
 * filter that hands the rest's answer on unchanged (most do) costs no promise of this wrapper's own.
 */
export function middleware(filter: Filter): MiddlewareHandler<FleetEnv> {
  // Hono awaits what a middleware returns: a refusal made at once is set without a promise
  const handler = (c: Context<FleetEnv>, next: Next): Promise<Response | undefined> | undefined => {
    let inner: Response | undefined;
    let passed: Promise<Response> | undefined;
    const answer = filter(c, () => {
      passed = next().then(() => (inner = c.res));
      return passed;
    });
    if (answer === passed) return passed;
    if (!(answer instanceof Promise)) return settle(c, answer, inner);
    return answer.then((a) => settle(c, a, inner));
  };
  return handler as MiddlewareHandler<FleetEnv>;
}

/** `answer` as the request's answer, unless it is the one already there (`inner`) */
function settle(c: Context<FleetEnv>, answer: Response, inner: Response | undefined): undefined {
  if (answer === inner) return undefined;
  c.res = undefined;
  c.res = answer;
  return undefined;
}
