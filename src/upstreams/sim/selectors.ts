/**
 * Label and field selectors with apimachinery's syntax and error messages.
 */

import { badRequest } from '../../merge/status.ts';
import type { KubeObject } from './catalog/types.ts';
import { StatusError } from './http.ts';

export type LabelRequirement =
  | { key: string; op: 'exists' | '!' }
  | { key: string; op: '=' | '!='; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'gt' | 'lt'; value: number };

export type Labels = Record<string, string> | undefined;

function splitTopLevel(s: string): string[] {
  // commas inside `in (a,b)` belong to the requirement
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((x) => x.trim()).filter((x) => x !== '');
}

const KEY_RE = /^([a-z0-9A-Z]([-a-z0-9A-Z.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string): string {
  if (!KEY_RE.test(key) || key.length > 316) {
    throw new StatusError(
      badRequest(
        `unable to parse requirement: <nil>: Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      ),
    );
  }
  return key;
}

function checkValue(key: string, value: string): string {
  if (!VALUE_RE.test(value) || value.length > 63) {
    throw new StatusError(
      badRequest(
        `unable to parse requirement: values[0][${key}]: Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      ),
    );
  }
  return value;
}

export function parseLabelSelector(s: string | null | undefined): LabelRequirement[] {
  if (!s) return [];
  const reqs: LabelRequirement[] = [];
  for (const part of splitTopLevel(s)) {
    const setM = part.match(/^(\S+?)\s+(in|notin)\s*\((.*)\)$/);
    const eqM = part.match(/^([^=!<>\s]+)\s*(==|!=|=)\s*(.*)$/);
    const cmpM = part.match(/^([^=!<>\s]+)\s*([<>])\s*(-?\d+)$/);
    const notM = part.match(/^!\s*([^=!<>\s]+)$/);
    const existsM = part.match(/^([^=!<>\s()]+)$/);
    if (setM) {
      const key = checkKey(setM[1]!);
      const values = setM[3]!
        .split(',')
        .map((v) => v.trim())
        .map((v) => checkValue(key, v));
      reqs.push({ key, op: setM[2] as 'in' | 'notin', values });
    } else if (eqM) {
      const key = checkKey(eqM[1]!);
      const value = checkValue(key, eqM[3]!.trim());
      reqs.push({ key, op: eqM[2] === '!=' ? '!=' : '=', value });
    } else if (cmpM) {
      reqs.push({ key: checkKey(cmpM[1]!), op: cmpM[2] === '>' ? 'gt' : 'lt', value: Number(cmpM[3]) });
    } else if (notM) {
      reqs.push({ key: checkKey(notM[1]!), op: '!' });
    } else if (existsM) {
      reqs.push({ key: checkKey(existsM[1]!), op: 'exists' });
    } else {
      throw new StatusError(badRequest(`unable to parse requirement: found '${part}', expected: identifier`));
    }
  }
  return reqs;
}

export function matchLabels(reqs: LabelRequirement[], labels: Labels): boolean {
  const l = labels ?? {};
  for (const r of reqs) {
    const has = Object.hasOwn(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case '=':
        if (!has || v !== r.value) return false;
        break;
      case '!=':
        if (has && v === r.value) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'gt':
      case 'lt': {
        if (!has) return false;
        const n = Number(v);
        if (!Number.isInteger(n)) return false;
        if (r.op === 'gt' ? !(n > r.value) : !(n < r.value)) return false;
      }
    }
  }
  return true;
}

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
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

function unescapeField(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\' && i + 1 < s.length) {
      cur += ch + s[i + 1];
      i++;
    } else if (ch === sep) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

export function parseFieldSelector(s: string | null | undefined, resource: string): FieldRequirement[] {
  if (!s) return [];
  const reqs: FieldRequirement[] = [];
  for (const part of splitUnescaped(s, ',')) {
    if (part === '') continue;
    const m = part.match(/^((?:[^=!\\]|\\.)+)(==|!=|=)(.*)$/);
    if (!m) throw new StatusError(badRequest(`invalid selector: '${s}'; can't understand '${part}'`));
    const field = m[1]!.trim();
    if (field !== 'metadata.name' && field !== 'metadata.namespace' && !FIELDS[resource]?.[field]) {
      throw new StatusError(badRequest(`field label not supported: ${field}`));
    }
    reqs.push({ field, op: m[2] === '!=' ? '!=' : '=', value: unescapeField(m[3]!) });
  }
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
    if (r.op === '=' ? v !== r.value : v === r.value) return false;
  }
  return true;
}

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
