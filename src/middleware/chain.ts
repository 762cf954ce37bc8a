/**
 * The handler chain, built once as kube-apiserver's DefaultBuildHandlerChain builds its own: each filter
 * (one small file per filter in this folder) wraps the handler after it, and the chain is the outermost
 * handler. A filter is handed the request and the next handler, and answers:
 *
 *   - it refuses: it returns its answer and the handler after it never runs;
 *   - it passes the request on: it returns `next(c)` itself, so a filter that only looks at the request
 *     (request info, impersonation without `Impersonate-*`, authorization without a policy) costs no
 *     promise, no async frame, no microtask of its own;
 *   - it has work to do once the answer is known (metrics, audit, limits): {@link afterAnswer}, which runs it
 *     at once for an answer already there and only waits for one still coming.
 *
 * Recovery (kube's WithPanicRecovery) is where the answer is made: a throw or a rejection of a filter or
 * the handler becomes a Status right there (recovery/index.ts), `c.error` holds the error, and every
 * filter before it sees an answer as for any refusal (counted, audited, mapped by limits).
 */
import type { Context } from 'hono';
import type { FleetEnv } from '../types.ts';
import { errorToResponse } from './recovery/index.ts';

/** An answer, now or to come. */
export type Answer = Response | Promise<Response>;
export type Handler = (c: Context<FleetEnv>) => Answer;
export type Filter = (c: Context<FleetEnv>, next: Handler) => Answer;

function recovered(c: Context<FleetEnv>, err: unknown): Response {
  c.error = err as Error;
  return errorToResponse(err, c.req.raw.signal);
}

/**
 * The last answer still to come made one that cannot reject (its rejection is already a Status). A
 * filter that passes the next handler's answer on, as most do, returns exactly this promise, within the
 * same synchronous return through the chain (no other request runs in between): it is handed on without
 * a promise of its own. Any other promise gets a catch (at worst one too many, never one too few).
 */
let lastSafe: Promise<Response> | undefined;

function safe(c: Context<FleetEnv>, p: Promise<Response>): Promise<Response> {
  if (p === lastSafe) return p;
  lastSafe = p.catch((err: unknown) => recovered(c, err));
  return lastSafe;
}

/** `then(answer)`, without a promise when the answer is already there; a throw of `then` is a Status. */
export function afterAnswer(c: Context<FleetEnv>, answer: Answer, then: (res: Response) => Answer): Answer {
  const run = (res: Response): Answer => {
    let a: Answer;
    try {
      a = then(res);
    } catch (err) {
      return recovered(c, err);
    }
    return a instanceof Promise ? safe(c, a) : a;
  };
  if (!(answer instanceof Promise)) return run(answer);
  const q = answer.then(run);
  // `answer` came from the next handler, which never rejects; `run` does not either
  if (answer === lastSafe) lastSafe = q;
  return q;
}

/** `h`, whose throws and rejections are answers (see the module comment): it never throws nor rejects. */
function guarded(h: Handler): Handler {
  return (c) => {
    let a: Answer;
    try {
      a = h(c);
    } catch (err) {
      return recovered(c, err);
    }
    return a instanceof Promise ? safe(c, a) : a;
  };
}

/** `filters[0]` wrapping `filters[1]` … wrapping `handler`, in that order. */
export function chain(filters: readonly Filter[], handler: Handler): Handler {
  let h = guarded(handler);
  for (let i = filters.length - 1; i >= 0; i--) {
    const filter = filters[i]!;
    const next = h;
    h = guarded((c) => filter(c, next));
  }
  const outermost = h;
  const whole: Handler = (c) => {
    const a = outermost(c);
    // the request's answer is not kept past its own way through the chain
    lastSafe = undefined;
    return a;
  };
  recovering.add(whole);
  return whole;
}

/** the handlers {@link chain} made */
const recovering = new WeakSet<Handler>();

/** Whether `h` is a chain, whose answer never rejects (its recovery catches): no catch is needed around it. */
export function neverRejects(h: Handler): boolean {
  return recovering.has(h);
}
