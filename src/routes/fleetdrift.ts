/**
 * `kubectl fleet diff`: the fleet's own endpoint `/apis/fleet.karmada.io/v1alpha1/namespaces/<ns>/drifts`
 * (`/apis/fleet.karmada.io/v1alpha1/drifts` for a cluster-scoped template; what it takes and answers:
 * src/plan/fleetdrift.ts). Two reads of the control plane (the template's ResourceBinding or
 * ClusterResourceBinding, then its Works, both by upstreams/bindings.ts), then every cluster it went to
 * asked for its copy at once, as the caller; each copy compared with what Karmada applied to it
 * (src/merge/drift.ts).
 */
import type { Context } from 'hono';
import { badRequest, failure, notFound, statusResponse } from '../kube/status.ts';
import { guessResource } from '../merge/bindings.ts';
import { driftOf } from '../merge/drift.ts';
import { fleetName } from '../merge/objects/index.ts';
import {
  type CopyReport,
  copyPath,
  type DriftReport,
  manifestFor,
  readDriftAsk,
} from '../plan/fleetdrift.ts';
import type { RequestInfo } from '../request/info.ts';
import type { ClustersDeps, FanOutDeps } from '../types.ts';
import { readBindings } from '../upstreams/bindings.ts';
import { fanOut, fleetTargets } from '../upstreams/fanout.ts';

export type FleetDriftDeps = FanOutDeps & ClustersDeps;

export async function fleetDriftRoute(
  c: Context,
  deps: FleetDriftDeps,
  info: RequestInfo,
): Promise<Response> {
  const req = c.req.raw;
  if (req.method !== 'GET') return statusResponse(failure(405, 'MethodNotAllowed', 'drifts take GET'));
  const ask = readDriftAsk(info.namespace, new URL(req.url).searchParams);
  if ('code' in ask) return statusResponse(ask);
  const targets = await fleetTargets(deps, req.signal);
  const karmada = targets.find((t) => t.controlPlane);
  if (!karmada)
    return statusResponse(
      badRequest(
        'drifts compare Karmada templates with their copies: the fleet view has no control plane (federation off)',
      ),
    );
  const group = ask.apiVersion.includes('/') ? ask.apiVersion.split('/')[0]! : '';
  // a template without a namespace is cluster-scoped: its binding is a ClusterResourceBinding
  const kind = ask.namespace ? 'resourcebindings' : 'clusterresourcebindings';
  const read = await readBindings(
    deps,
    karmada,
    {
      namespace: ask.namespace,
      cluster: !ask.namespace,
      group,
      resource: guessResource(ask.kind),
      template: `${ask.namespace}/${ask.name}`,
      works: true,
    },
    req.signal,
  );
  if (read === undefined)
    return statusResponse(
      failure(503, 'ServiceUnavailable', `the control plane’s ${kind} could not be read`),
    );
  const p = [...read.index.byTemplate.values()].find((b) => b.template.kind === ask.kind);
  const where = ask.namespace ? `${ask.namespace}/${ask.name}` : ask.name;
  if (!p)
    return statusResponse(
      notFound(kind, 'work.karmada.io', `${ask.name} (no binding propagates ${ask.kind} ${where})`),
    );
  await read.works;

  const view = { federation: deps.config.federation };
  const members = p.placements.flatMap((pl) => targets.filter((t) => t.cluster === pl.cluster));
  const outcomes = await fanOut(deps, members, () => ({
    method: 'GET',
    path: copyPath(ask),
    headers: new Headers({ Accept: 'application/json', 'Accept-Encoding': 'identity' }),
    signal: req.signal,
  }));
  const copies: CopyReport[] = [];
  for (const pl of p.placements) {
    const name = fleetName(view, ask.name, pl.cluster);
    const o = outcomes.find((x) => x.target.cluster === pl.cluster);
    if (!o) {
      copies.push({ cluster: pl.cluster, name, state: 'Unknown', error: 'not a cluster of the fleet' });
      continue;
    }
    if (!o.ok) {
      copies.push({ cluster: pl.cluster, name, state: 'Unknown', error: o.error.message });
      continue;
    }
    const text = await o.res.text().catch(() => '');
    if (o.res.status === 404) {
      copies.push({ cluster: pl.cluster, name, state: 'Missing' });
      continue;
    }
    if (!o.res.ok) {
      copies.push({
        cluster: pl.cluster,
        name,
        state: 'Unknown',
        error: `HTTP ${o.res.status}: ${text.slice(0, 200)}`,
      });
      continue;
    }
    const manifest = manifestFor(read.index.manifests, pl.cluster, ask);
    if (!manifest) {
      copies.push({ cluster: pl.cluster, name, state: 'Unknown', error: 'its Work could not be read' });
      continue;
    }
    const differences = driftOf(manifest, JSON.parse(text));
    copies.push({ cluster: pl.cluster, name, state: differences.length ? 'Drifted' : 'InSync', differences });
  }
  const report: DriftReport = {
    kind: 'DriftReport',
    apiVersion: 'fleet.karmada.io/v1alpha1',
    template: p.template,
    binding: p.binding,
    copies,
  };
  return new Response(JSON.stringify(report), {
    status: 200,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
  });
}
