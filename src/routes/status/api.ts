/**
 * `GET /fleet/api/clusters`: every cluster of the fleet as this server reaches it now — asked for its
 * `/version` in parallel with the caller's identity (so the page shows what the caller can reach), timed,
 * with Karmada's own Ready condition and the last upstream error the fleet saw for it.
 */
import type { FleetMetrics } from '../../metrics/fleet.ts';
import type { ClustersDeps, FanOutDeps } from '../../types.ts';
import { fanOut, fleetTargets } from '../../upstreams/fanout.ts';

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
  const started = new Map<string, number>();
  const outcomes = await fanOut(deps, targets, (t) => {
    started.set(t.cluster, now());
    return {
      method: 'GET',
      path: '/version',
      headers: new Headers({ Accept: 'application/json' }),
      signal: probe,
    };
  });
  const karmada = new Map(members.map((m) => [m.name, m.ready ? 'Ready' : (m.reason ?? 'NotReady')]));
  return Promise.all(
    outcomes.map(async (o): Promise<ClusterStatus> => {
      const name = o.target.cluster;
      const s: ClusterStatus = { name, state: 'unreachable' };
      const k = karmada.get(name);
      if (k) s.karmada = k;
      if (o.ok) {
        s.latencyMs = Math.round(now() - (started.get(name) ?? now()));
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
