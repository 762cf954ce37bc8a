/**
 * The fleet's filters, one small file per filter in this folder, each a Hono middleware registered with
 * `app.use` in kube-apiserver's DefaultBuildHandlerChain order (src/app.ts). A filter is handed the
 * request and `next`, Hono's rest of the app, and:
 *
 *   - refuses: it returns its answer and the rest never runs;
 *   - passes the request on: it returns `next()`;
 *   - has work to do once the answer is known (metrics, audit, limits): {@link afterAnswer}.
 *
 * Recovery (kube's WithPanicRecovery) is the app's `onError`: Hono turns a throw or a rejection into its
 * Status where it happens (`c.error` holds the error), and every filter before it sees an answer as for
 * any refusal (counted, audited, mapped by limits).
 */
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { FleetEnv } from '../types.ts';

/**
 * Hono's middleware, allowed to return a refusal made at once without a promise (Hono awaits whatever a
 * middleware returns); a filter that passes the request on returns `next()` itself, with no promise or
 * async frame of its own.
 */
export type Filter = (c: Context<FleetEnv>, next: Next) => FilterAnswer;

/** A refusal now, or the answer to come (a refusal, or nothing: the rest answered, its answer is `c.res`). */
// biome-ignore lint/suspicious/noConfusingVoidType: Hono's MiddlewareHandler says it so (`next()` is Promise<void>)
export type FilterAnswer = Response | Promise<Response | void>;

/** `filter` for `app.use` (the same function: only its type is Hono's narrower one). */
export function middleware(filter: Filter): MiddlewareHandler<FleetEnv> {
  return filter as MiddlewareHandler<FleetEnv>;
}

/**
 * Once the rest of the app has answered (`rest`, what `next()` returned): `then(c.res)` is the answer.
 * An answer `then` changed is set whole, not merged: Hono's `c.res` setter copies the old answer's
 * headers into a new one, and a refusal must not carry the route's.
 */
export function afterAnswer(
  c: Context<FleetEnv>,
  rest: Promise<void>,
  then: (res: Response) => Response | Promise<Response>,
): Promise<void> {
  return rest.then(() => {
    const res = c.res;
    const out = then(res);
    if (!(out instanceof Promise)) return replaceAnswer(c, res, out);
    return out.then((o) => replaceAnswer(c, res, o));
  });
}

function replaceAnswer(c: Context<FleetEnv>, before: Response, after: Response): void {
  if (after === before) return;
  c.res = undefined;
  c.res = after;
}

/**
 * What a filter run inside another (limits runs the body intake when it comes first) returned, as
 * `next()` would have it: a refusal becomes `c.res`.
 */
export function answered(c: Context<FleetEnv>, r: FilterAnswer): Promise<void> {
  if (r instanceof Response) {
    c.res = r;
    return Promise.resolve();
  }
  return r.then((v) => {
    if (v instanceof Response) c.res = v;
  });
}
