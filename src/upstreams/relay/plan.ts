/**
 * How one request reaches many clusters where the runtime limits what an invocation may hold (Workers:
 * 6 simultaneous outgoing connections), and how many clusters it may reach at all. Reasoning and the
 * platform's documented limits: docs/deployment.md "How many clusters one request reaches".
 */

/** What the plan needs of the fleet: the connection budget, the relay, the configured reach. */
export interface ReachDeps {
  maxConnectionsPerRequest: number;
  relay?: unknown;
  /** clusters one request may ask at most (config `maxClustersPerRequest`); unbounded when absent */
  maxClustersPerRequest?: number;
}

/**
 * A request that would ask more clusters than the fleet may reach in one request: refused as a whole
 * (middleware/recovery answers a 503 Status with this message) before any cluster is asked.
 */
export class TooManyClustersError extends Error {
  constructor(
    readonly asked: number,
    readonly limit: number,
  ) {
    super(
      `this request spans ${asked} clusters; the fleet asks at most ${limit} clusters in one request (setting maxClustersPerRequest); ask a clusterspace (/clusterspaces/<cluster>) or raise the setting within the runtime's limits (docs/deployment.md)`,
    );
    this.name = 'TooManyClustersError';
  }
}

/** Throws TooManyClustersError when `n` clusters are more than one request may reach. */
export function assertReach(deps: Pick<ReachDeps, 'maxClustersPerRequest'>, n: number): void {
  const limit = deps.maxClustersPerRequest;
  if (limit !== undefined && n > limit) throw new TooManyClustersError(n, limit);
}

/**
 * Groups of at most `budget` targets, each asked through one relay invocation, all from the calling
 * invocation: one level, however wide. A service-binding call does not count against the caller's
 * connection budget (only each relay's own upstream fetches do), so nothing is gained by nesting relays,
 * and every level would add a hop towards the platform's invocation depth limit and frame every byte
 * once more. Undefined when the targets fit the budget as they are, or there is no relay.
 */
export function relayGroups<T>(deps: ReachDeps, targets: T[]): T[][] | undefined {
  assertReach(deps, targets.length);
  const budget = deps.maxConnectionsPerRequest;
  if (targets.length <= budget || !deps.relay) return undefined;
  const groups: T[][] = [];
  for (let i = 0; i < targets.length; i += budget) groups.push(targets.slice(i, i + budget));
  return groups;
}
