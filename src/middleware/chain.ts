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
 * Answers still to come that cannot reject (their rejection is already a Status): a filter that passes
 * such an answer on, as most do, adds no promise of its own to it.
 */
const SAFE = new WeakSet<Promise<Response>>();

function safe(c: Context<FleetEnv>, p: Promise<Response>): Promise<Response> {
  if (SAFE.has(p)) return p;
  const q = p.catch((err: unknown) => recovered(c, err));
  SAFE.add(q);
  return q;
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
  if (SAFE.has(answer)) SAFE.add(q);
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
  return h;
}
