/**
 * Which clusters a clusterspace means, and asking them all at once.
 *
 * Order is the fleet's deterministic cluster order: the control plane (`karmada`, when federation is on)
 * first, then members by name. Merged answers list items in this order.
 */

import type { ClustersDeps, FanOutDeps } from '../types.ts';
import { type SendOptions, UpstreamError } from './client.ts';
import type { ResolvedEndpoint } from './endpoint.ts';
import { type ReachDeps, relayGroups } from './relay/plan.ts';
import { type RelayMode, relayGroup } from './relay.ts';

export interface Target {
  cluster: string;
  endpoint: ResolvedEndpoint;
  /** the Karmada control plane itself */
  controlPlane: boolean;
}

/**
 * Every cluster of the fleet view (`all`): with federation, the control plane and the members; without,
 * the members only.
 */
export async function fleetTargets(deps: ClustersDeps, signal?: AbortSignal): Promise<Target[]> {
  const members = await deps.membership.members(signal);
  const out: Target[] = [];
  if (deps.config.federation)
    out.push({ cluster: 'karmada', endpoint: deps.membership.controlPlane, controlPlane: true });
  for (const m of members) out.push({ cluster: m.name, endpoint: m.endpoint, controlPlane: false });
  return out;
}

/**
 * The clusters of a clusterspace (`all`, `karmada`, or a member), or undefined when it names none.
 * `karmada` is always addressable, federation or not: it is the control plane.
 */
export async function clusterspaceTargets(
  deps: ClustersDeps,
  clusterspace: string,
  signal?: AbortSignal,
): Promise<Target[] | undefined> {
  if (clusterspace === 'all') return fleetTargets(deps, signal);
  if (clusterspace === 'karmada')
    return [{ cluster: 'karmada', endpoint: deps.membership.controlPlane, controlPlane: true }];
  const m = (await deps.membership.members(signal)).find((x) => x.name === clusterspace);
  return m ? [{ cluster: m.name, endpoint: m.endpoint, controlPlane: false }] : undefined;
}

/** The names every composite RV and continue token of this fleet is made for (sorted by rv.ts). */
export async function fleetMembership(deps: ClustersDeps, signal?: AbortSignal): Promise<string[]> {
  return (await fleetTargets(deps, signal)).map((t) => t.cluster);
}

export type Outcome =
  | { target: Target; ok: true; res: Response }
  | { target: Target; ok: false; error: UpstreamError };

/**
 * Sends one request per target, all in parallel, and waits for every response's headers (bodies stay
 * unread: the caller streams them). Transport failures and timeouts become failed outcomes, never throws
 * (but a caller abort does).
 *
 * Wider than the per-request connection budget (Workers: 6), the targets are split into groups asked
 * through the fleet's own relay (src/upstreams/relay.ts); `mode` says how the relay orders the bodies:
 * `list` (heads first, then each body in turn) or `stream` (as they come, for watches).
 *
 * Who the requests go as is the bound client's business (middleware/impersonation): there is no second
 * way to pass an identity here, so no call site can send as anyone but the caller.
 */
export async function fanOut(
  deps: FanOutDeps,
  targets: Target[],
  request: (t: Target) => SendOptions,
  mode: RelayMode = 'list',
): Promise<Outcome[]> {
  const groups = splitForBudget(deps, targets);
  if (groups && deps.relay) {
    const relay = deps.relay;
    deps.metrics?.relayGroups.inc({ mode }, groups.length);
    // the relay invocation sends as this caller: the bound client's identity travels with the group
    // (never the caller's raw credential headers: they are filtered here already)
    const as = deps.client.caller;
    const answers = await Promise.all(
      groups.map((g) => {
        const reqs = g.map(request).map((r) => ({ ...r, headers: deps.client.forwardable(r.headers) }));
        return relayGroup(
          relay,
          g.map((t) => t.cluster),
          reqs,
          as,
          mode,
          reqs[0]?.signal,
        );
      }),
    );
    return answers.flatMap((a, gi) => a.map((o, i): Outcome => ({ ...o, target: groups[gi]![i]! })));
  }
  // a `then` per target, not an async function's frame (a merged list's 1,000 clusters: 1,000 of them)
  return Promise.all(targets.map((target) => sendOne(deps, target, request)));
}

function sendOne(deps: FanOutDeps, target: Target, request: (t: Target) => SendOptions): Promise<Outcome> {
  let sent: Promise<Response>;
  try {
    sent = deps.client.send(target.endpoint, request(target));
  } catch (err) {
    sent = Promise.reject(err);
  }
  return sent.then(
    (res): Outcome => ({ target, ok: true, res }),
    (err: unknown): Outcome => {
      if (err instanceof UpstreamError) return { target, ok: false, error: err };
      throw err;
    },
  );
}

/** Relay groups for a fan-out wider than the budget, one level (./relay/plan.ts); refuses one too wide. */
export function splitForBudget(deps: ReachDeps, targets: Target[]): Target[][] | undefined {
  return relayGroups(deps, targets);
}

/** `Warning: 299 - "…"` as kube-apiserver writes it (RFC 7234 warn-text, quotes and backslashes escaped). */
export function warningHeader(text: string): string {
  return `299 - "${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
