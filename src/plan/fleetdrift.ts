/**
 * The drift of one template's copies (`kubectl fleet diff`), pure: the ask read from the query, the path of
 * each member's copy, and the report.
 *
 *   GET /apis/fleet.karmada.io/v1alpha1/namespaces/<ns>/drifts?apiVersion=apps/v1&kind=Deployment&name=web
 *   GET /apis/fleet.karmada.io/v1alpha1/drifts?apiVersion=rbac.authorization.k8s.io/v1&kind=ClusterRole&name=r
 *
 * The template's ResourceBinding (its ClusterResourceBinding when cluster-scoped) says the clusters; each cluster's Work holds what Karmada
 * applied there (the template after overrides); each member's copy is read as the caller and compared
 * field by field (src/merge/drift.ts). The answer (JSON):
 *   {"kind":"DriftReport","apiVersion":"fleet.karmada.io/v1alpha1","template":{…},"binding":"ns/name",
 *    "copies":[{"cluster":"member1","name":"web.clusterspace.member1","state":"Drifted",
 *               "differences":[{"path":"spec.replicas","template":2,"member":5}]}, …]}
 * state: InSync, Drifted, Missing (no copy in the member), Unknown (the Work or the copy could not be read).
 */
import { badRequest, type Status } from '../kube/status.ts';
import { guessResource } from '../merge/bindings.ts';
import type { Difference } from '../merge/drift.ts';

export const FLEET_DRIFT_GROUP = 'fleet.karmada.io';
export const FLEET_DRIFT_RESOURCE = 'drifts';

export function isFleetDrift(info: { apiGroup: string; resource: string; name: string }): boolean {
  return info.apiGroup === FLEET_DRIFT_GROUP && info.resource === FLEET_DRIFT_RESOURCE && info.name === '';
}

export interface DriftAsk {
  namespace: string;
  apiVersion: string;
  kind: string;
  name: string;
}

/** `namespace` empty: the template is cluster-scoped (`/apis/fleet.karmada.io/v1alpha1/drifts?…`). */
export function readDriftAsk(namespace: string, q: URLSearchParams): DriftAsk | Status {
  const apiVersion = q.get('apiVersion') ?? '';
  const kind = q.get('kind') ?? '';
  const name = q.get('name') ?? '';
  const missing = [
    ['apiVersion', apiVersion],
    ['kind', kind],
    ['name', name],
  ].flatMap(([k, v]) => (v ? [] : [k]));
  if (missing.length)
    return badRequest(
      `drifts need ${missing.join(', ')} (the template, e.g. apiVersion=apps/v1&kind=Deployment&name=web)`,
    );
  if (!/^([a-z0-9.-]+\/)?v[0-9a-z]+$/.test(apiVersion))
    return badRequest(`apiVersion ${JSON.stringify(apiVersion)} is not group/version`);
  return { namespace, apiVersion, kind, name };
}

/** Where a member keeps its copy (the template's own path: Karmada keeps name and namespace). */
export function copyPath(ask: DriftAsk): string {
  const base = ask.apiVersion.includes('/') ? `/apis/${ask.apiVersion}` : `/api/${ask.apiVersion}`;
  const ns = ask.namespace ? `/namespaces/${encodeURIComponent(ask.namespace)}` : '';
  return `${base}${ns}/${guessResource(ask.kind)}/${encodeURIComponent(ask.name)}`;
}

export type CopyState = 'InSync' | 'Drifted' | 'Missing' | 'Unknown';

export interface CopyReport {
  cluster: string;
  name: string;
  state: CopyState;
  differences?: Difference[];
  error?: string;
}

export interface DriftReport {
  kind: 'DriftReport';
  apiVersion: 'fleet.karmada.io/v1alpha1';
  template: { apiVersion: string; kind: string; namespace: string; name: string };
  binding: string;
  copies: CopyReport[];
}

/**
 * The Work manifest Karmada wrote for `cluster` (its execution namespace `karmada-es-<cluster>`), from the
 * manifests read by the Works' `namespace/name`.
 */
export function manifestFor(
  manifests: ReadonlyMap<string, unknown>,
  cluster: string,
  ask: DriftAsk,
): unknown {
  const prefix = `karmada-es-${cluster}/`;
  for (const [work, m] of manifests) {
    if (!work.startsWith(prefix)) continue;
    const o = m as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
    if (
      o?.kind === ask.kind &&
      o.metadata?.name === ask.name &&
      (o.metadata?.namespace ?? '') === ask.namespace
    )
      return m;
  }
  return undefined;
}
