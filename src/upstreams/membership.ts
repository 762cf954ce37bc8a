/**
 * Who is in the fleet. Either Karmada's Cluster objects (listed from the control plane, trusted for a
 * short TTL, each member reached through the cluster proxy), a hub's ClusterProfiles (the same TTL, each
 * member reached by its access provider: ./clusterprofiles.ts) or a static list from the config.
 *
 * Only resolved data is cached, never a pending promise: on the worker runtime an isolate serves many
 * requests, and I/O started by one request must not be awaited by another.
 */
import type { UpstreamClient } from './client.ts';
import { ClusterProfileError, type ClusterProfileSource, listProfileMembers } from './clusterprofiles.ts';
import { type ResolvedEndpoint, viaClusterProxy } from './endpoint.ts';

export const RESERVED_CLUSTERSPACES = new Set(['all', 'karmada']);

export interface Member {
  name: string;
  /** Karmada's Ready condition (static members: always true; reachability is found per request) */
  ready: boolean;
  /** why it is not ready, from the condition's message */
  reason?: string;
  endpoint: ResolvedEndpoint;
}

export type MembershipSource =
  | { mode: 'karmada'; refreshMs: number }
  | { mode: 'static'; members: ResolvedEndpoint[] }
  | ClusterProfileSource;

interface ClusterObject {
  metadata?: { name?: string };
  status?: { conditions?: Array<{ type?: string; status?: string; message?: string; reason?: string }> };
}

export class MembershipError extends Error {
  override name = 'MembershipError';
}

export class Membership {
  private cached?: { at: number; members: Member[] };

  constructor(
    readonly controlPlane: ResolvedEndpoint,
    private readonly source: MembershipSource,
    private readonly client: Pick<UpstreamClient, 'send'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** All members, sorted by name (the fleet's deterministic cluster order). */
  async members(signal?: AbortSignal): Promise<Member[]> {
    if (this.source.mode === 'static') {
      return this.source.members.map((endpoint) => ({ name: endpoint.name, ready: true, endpoint }));
    }
    const fresh = this.fresh();
    if (fresh) return fresh;
    const c = this.cached;
    try {
      const members =
        this.source.mode === 'clusterProfiles'
          ? await listProfileMembers(this.client, this.source, signal).catch((e) => {
              // the hub's refusal answers like the control plane's: 503, retry (middleware/recovery)
              throw e instanceof ClusterProfileError ? new MembershipError(e.message) : e;
            })
          : await this.listClusters(signal);
      this.cached = { at: this.now(), members };
      return members;
    } catch (err) {
      // a control plane hiccup must not take the fleet away: serve the last known membership
      if (c) return c.members;
      throw err;
    }
  }

  /** The endpoint for a clusterspace that names one cluster, or undefined when it names none. */
  async endpointFor(clusterspace: string, signal?: AbortSignal): Promise<ResolvedEndpoint | undefined> {
    const known = this.knownEndpoint(clusterspace);
    if (known !== undefined) return known ?? undefined;
    return (await this.members(signal)).find((m) => m.name === clusterspace)?.endpoint;
  }

  /**
   * {@link endpointFor}'s answer when it needs no I/O (a static member, a reserved name, membership
   * listed within its TTL; null: the clusterspace names no cluster), undefined when the clusters must be
   * listed first. A passthrough request asks this first: an answer at hand costs it no promise, no async
   * frame and no copy of the member list.
   */
  knownEndpoint(clusterspace: string): ResolvedEndpoint | null | undefined {
    if (clusterspace === 'karmada') return this.controlPlane;
    if (RESERVED_CLUSTERSPACES.has(clusterspace)) return null;
    if (this.source.mode === 'static')
      return this.source.members.find((e) => e.name === clusterspace) ?? null;
    const fresh = this.fresh();
    return fresh && (fresh.find((m) => m.name === clusterspace)?.endpoint ?? null);
  }

  /** the listed members while they are within their refresh time (membership from Karmada or profiles) */
  private fresh(): Member[] | undefined {
    if (this.source.mode === 'static') return undefined;
    const c = this.cached;
    return c && this.now() - c.at < this.source.refreshMs ? c.members : undefined;
  }

  private async listClusters(signal?: AbortSignal): Promise<Member[]> {
    const res = await this.client.send(this.controlPlane, {
      method: 'GET',
      path: '/apis/cluster.karmada.io/v1alpha1/clusters',
      headers: new Headers({ Accept: 'application/json' }),
      signal,
    });
    if (!res.ok) {
      const body = await res.text().catch(() => '');
      let message = body.slice(0, 200);
      try {
        message = JSON.parse(body).message ?? message;
      } catch {
        // not a Status; keep the text
      }
      throw new MembershipError(`listing Karmada clusters failed: ${res.status} ${message}`);
    }
    const list = (await res.json()) as { items?: ClusterObject[] };
    const members: Member[] = [];
    for (const item of list.items ?? []) {
      const name = item.metadata?.name;
      // a Cluster named like a reserved clusterspace could never be addressed: leave it out, loudly
      if (!name || RESERVED_CLUSTERSPACES.has(name)) {
        console.warn(`fleet: ignoring Karmada cluster with reserved or empty name "${name ?? ''}"`);
        continue;
      }
      const ready = item.status?.conditions?.find((x) => x.type === 'Ready');
      const reason =
        ready?.status === 'True' ? undefined : (ready?.message ?? ready?.reason ?? 'no Ready condition');
      const endpoint = viaClusterProxy(this.controlPlane, name);
      // a member Karmada calls not Ready is treated as down: skipped with a Warning, never dialled
      if (reason !== undefined) endpoint.notReady = `not Ready in Karmada: ${reason}`;
      members.push({ name, ready: reason === undefined, reason, endpoint });
    }
    members.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return members;
  }
}
