/**
 * `GET /fleet/api/clusters`: every cluster of the fleet as this server reaches it now — asked for its
 * `/version` in parallel with the caller's identity (so the page shows what the caller can reach), timed,
 * with Karmada's own Ready condition and the last upstream error the fleet saw for it.
 */
import type { FleetMetrics } from '../../metrics/fleet.ts';
import type { ClustersDeps, FanOutDeps } from '../../types.ts';
import { UpstreamError } from '../../upstreams/client.ts';
import { fleetTargets, type Target } from '../../upstreams/fanout.ts';

type Probe =
  | { target: Target; ok: true; res: Response; ms: number }
  | { target: Target; ok: false; error: UpstreamError };

export interface StatusDeps extends ClustersDeps, FanOutDeps {
  metrics?: FleetMetrics;
}

export interface ClusterStatus {
  name: string;
  /** ready: answered; unreachable: no answer (down, refused, timed out); not ready: answered an error */
  state: 'ready' | 'unreachable' | 'not ready';
  version?: string;
  latencyMs?: number;
  /** Karmada's Ready condition for a member ("Ready", or its reason), absent for the control plane */
  karmada?: string;
  lastError?: { at: string; reason: string; message: string };
}

const PROBE_TIMEOUT_MS = 5000;

export async function clusterStatuses(deps: StatusDeps, signal: AbortSignal, now = () => performance.now()) {
  const [targets, members] = await Promise.all([fleetTargets(deps, signal), deps.membership.members(signal)]);
  const probe = AbortSignal.any([signal, AbortSignal.timeout(PROBE_TIMEOUT_MS)]);
  // each cluster timed on its own (a fan-out answers when the slowest has): /version is small, so on
  // Workers the calls past the connection budget just wait their turn
  const outcomes = await Promise.all(
    targets.map(async (target): Promise<Probe> => {
      const t0 = now();
      try {
        const res = await deps.client.send(target.endpoint, {
          method: 'GET',
          path: '/version',
          headers: new Headers({ Accept: 'application/json' }),
          signal: probe,
        });
        return { target, ok: true, res, ms: now() - t0 };
      } catch (err) {
        if (err instanceof UpstreamError) return { target, ok: false, error: err };
        // the probe's own deadline, not the caller going away: that cluster is too slow to count as up
        if (!signal.aborted)
          return {
            target,
            ok: false,
            error: new UpstreamError(target.cluster, 'timeout', `${PROBE_TIMEOUT_MS / 1000}s`),
          };
        throw err;
      }
    }),
  );
  const karmada = new Map(members.map((m) => [m.name, m.ready ? 'Ready' : (m.reason ?? 'NotReady')]));
  return Promise.all(
    outcomes.map(async (o): Promise<ClusterStatus> => {
      const name = o.target.cluster;
      const s: ClusterStatus = { name, state: 'unreachable' };
      const k = karmada.get(name);
      if (k) s.karmada = k;
      if (o.ok) {
        s.latencyMs = Math.round(o.ms);
        const text = await o.res.text().catch(() => '');
        if (o.res.ok) {
          s.state = 'ready';
          try {
            s.version = (JSON.parse(text) as { gitVersion?: string }).gitVersion;
          } catch {
            // an answer that is not a version document: reachable all the same
          }
        } else {
          s.state = 'not ready';
          s.lastError = {
            at: new Date().toISOString(),
            reason: `status ${o.res.status}`,
            message: statusMessage(text, o.res.status),
          };
        }
      } else {
        s.lastError = { at: new Date().toISOString(), reason: o.error.kind, message: o.error.message };
      }
      const seen = deps.metrics?.lastErrors.get(name);
      if (!s.lastError && seen) s.lastError = seen;
      return s;
    }),
  );
}

function statusMessage(text: string, code: number): string {
  try {
    return (JSON.parse(text) as { message?: string }).message ?? `HTTP ${code}`;
  } catch {
    return `HTTP ${code}`;
  }
}
