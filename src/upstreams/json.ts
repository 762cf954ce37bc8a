/**
 * One JSON document read from one cluster through the fan-out (the bound client, its identity and
 * metrics), for the fleet's own reads beside a request: Karmada's ResourceBindings and Works.
 */

import type { FanOutDeps } from '../types.ts';
import { fanOut, type Target } from './fanout.ts';

/** The document, or undefined when the cluster cannot answer it (the caller goes on without). */
export async function readJson(
  deps: FanOutDeps,
  target: Target,
  path: string,
  signal: AbortSignal,
): Promise<unknown> {
  const [o] = await fanOut(deps, [target], () => ({
    method: 'GET',
    path,
    headers: new Headers({ Accept: 'application/json', 'Accept-Encoding': 'identity' }),
    signal,
  }));
  if (!o?.ok) return undefined;
  if (!o.res.ok) {
    await o.res.body?.cancel().catch(() => {});
    return undefined;
  }
  return o.res.json().catch(() => undefined);
}
