/**
 * Label and field selectors for the simulated apiserver: parsed by the fleet's own parser
 * (src/kube/selectors.ts, apimachinery's grammar and messages), matched here against objects, with the
 * kind-specific fields each resource supports.
 */

import {
  type FieldRequirement,
  type LabelRequirement,
  matchesLabels,
  parseFieldSelector as parseFields,
  parseLabelSelector as parseLabels,
  SelectorError,
} from '../src/kube/selectors.ts';
import { badRequest } from '../src/kube/status.ts';
import type { KubeObject } from './catalog/types.ts';
import { StatusError } from './http.ts';

/** Labels of an object (absent: none). */
export type Labels = Record<string, string> | undefined;

/** The fleet's own parser (src/kube/selectors.ts): one grammar, one set of error messages. */
function asStatus<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof SelectorError) throw new StatusError(e.status);
    throw e;
  }
}

export function parseLabelSelector(s: string | null | undefined): LabelRequirement[] {
  return s ? asStatus(() => parseLabels(s)) : [];
}

export function matchLabels(reqs: readonly LabelRequirement[], labels: Labels): boolean {
  return matchesLabels(reqs, labels ?? {});
}

/** Field selectors each kind supports, beyond metadata.name / metadata.namespace (pkg/registry/.../strategy.go). */
const FIELDS: Record<string, Record<string, (o: any) => string | undefined>> = {
  pods: {
    'spec.nodeName': (o) => o.spec?.nodeName ?? '',
    'spec.restartPolicy': (o) => o.spec?.restartPolicy ?? '',
    'spec.schedulerName': (o) => o.spec?.schedulerName ?? '',
    'spec.serviceAccountName': (o) => o.spec?.serviceAccountName ?? '',
    'spec.hostNetwork': (o) => String(o.spec?.hostNetwork ?? false),
    'status.phase': (o) => o.status?.phase ?? '',
    'status.podIP': (o) => o.status?.podIP ?? '',
    'status.nominatedNodeName': (o) => o.status?.nominatedNodeName ?? '',
  },
  events: {
    'involvedObject.kind': (o) => o.involvedObject?.kind ?? '',
    'involvedObject.namespace': (o) => o.involvedObject?.namespace ?? '',
    'involvedObject.name': (o) => o.involvedObject?.name ?? '',
    'involvedObject.uid': (o) => o.involvedObject?.uid ?? '',
    'involvedObject.apiVersion': (o) => o.involvedObject?.apiVersion ?? '',
    'involvedObject.resourceVersion': (o) => o.involvedObject?.resourceVersion ?? '',
    'involvedObject.fieldPath': (o) => o.involvedObject?.fieldPath ?? '',
    reason: (o) => o.reason ?? '',
    reportingComponent: (o) => o.reportingComponent ?? '',
    source: (o) => o.source?.component ?? '',
    type: (o) => o.type ?? '',
  },
  secrets: { type: (o) => o.type ?? '' },
  namespaces: { 'status.phase': (o) => o.status?.phase ?? '' },
  nodes: { 'spec.unschedulable': (o) => String(o.spec?.unschedulable ?? false) },
  replicasets: { 'status.replicas': (o) => String(o.status?.replicas ?? 0) },
  replicationcontrollers: { 'status.replicas': (o) => String(o.status?.replicas ?? 0) },
  jobs: { 'status.successful': (o) => String(o.status?.succeeded ?? 0) },
  certificatesigningrequests: { 'spec.signerName': (o) => o.spec?.signerName ?? '' },
};

/** Parses with the fleet's parser, then refuses fields this kind cannot select on, as the apiserver does. */
export function parseFieldSelector(s: string | null | undefined, resource: string): FieldRequirement[] {
  if (!s) return [];
  const reqs = asStatus(() => parseFields(s));
  for (const r of reqs)
    if (r.field !== 'metadata.name' && r.field !== 'metadata.namespace' && !FIELDS[resource]?.[r.field])
      throw new StatusError(badRequest(`field label not supported: ${r.field}`));
  return reqs;
}

export function fieldValue(obj: KubeObject, resource: string, field: string): string {
  if (field === 'metadata.name') return obj.metadata.name ?? '';
  if (field === 'metadata.namespace') return obj.metadata.namespace ?? '';
  return FIELDS[resource]?.[field]?.(obj) ?? '';
}

export function matchFields(reqs: FieldRequirement[], obj: KubeObject, resource: string): boolean {
  for (const r of reqs) {
    const v = fieldValue(obj, resource, r.field);
    if (r.operator === '=' ? v !== r.value : v === r.value) return false;
  }
  return true;
}

export type { FieldRequirement, LabelRequirement };

export interface Selector {
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

export function selectorMatches(sel: Selector, obj: KubeObject, resource: string): boolean {
  return matchLabels(sel.labels, obj.metadata.labels) && matchFields(sel.fields, obj, resource);
}

export function selectorEmpty(sel: Selector): boolean {
  return sel.labels.length === 0 && sel.fields.length === 0;
}
