/**
 * Discovery documents generated from the resource table, shaped (and field-ordered) like
 * kube-apiserver's: /api, /apis, /apis/<g>, /api/v1 and /apis/<g>/<v>, and aggregated discovery
 * (apidiscovery.k8s.io v2 / v2beta1, which differ only in apiVersion).
 */

import { sha256Hex, storageVersionHash } from './hash.ts';
import { hasStorage, storageGroupVersion } from './resources.ts';
import type { ResourceDef } from './types.ts';

export interface GroupVersions {
  group: string;
  versions: string[]; // priority order, preferred first
}

/** Groups (without the core group) and their versions in the order the resource table lists them. */
export function groupOrder(resources: readonly ResourceDef[]): GroupVersions[] {
  const out: GroupVersions[] = [];
  for (const r of resources) {
    if (r.group === '') continue;
    let g = out.find((x) => x.group === r.group);
    if (!g) {
      g = { group: r.group, versions: [] };
      out.push(g);
    }
    if (!g.versions.includes(r.version)) g.versions.push(r.version);
  }
  return out;
}

function gvString(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

function groupEntry(g: GroupVersions) {
  const versions = g.versions.map((v) => ({ groupVersion: gvString(g.group, v), version: v }));
  return { name: g.group, versions, preferredVersion: versions[0]! };
}

export function legacyApi(): unknown {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.10.10.10:8050' }],
  };
}

export function apiGroupList(resources: readonly ResourceDef[]): unknown {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groupOrder(resources).map(groupEntry) };
}

export function apiGroup(resources: readonly ResourceDef[], group: string): unknown | undefined {
  const g = groupOrder(resources).find((x) => x.group === group);
  if (!g) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(g) };
}

export function apiResourceList(
  resources: readonly ResourceDef[],
  group: string,
  version: string,
): unknown | undefined {
  const defs = resources.filter((r) => r.group === group && r.version === version);
  if (defs.length === 0) return undefined;
  const entries: Array<Record<string, unknown>> = [];
  for (const r of defs) {
    const e: Record<string, unknown> = {
      name: r.resource,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
    };
    if (r.shortNames) e.shortNames = r.shortNames;
    if (r.categories) e.categories = r.categories;
    if (hasStorage(r)) {
      const [sg, sv] = storageGroupVersion(r, resources);
      e.storageVersionHash = storageVersionHash(sg, sv, r.kind);
    }
    entries.push(e);
    for (const s of r.subresources ?? []) {
      const se: Record<string, unknown> = {
        name: `${r.resource}/${s.name}`,
        singularName: '',
        namespaced: r.namespaced,
      };
      if (s.group !== undefined) {
        se.group = s.group;
        se.version = s.version;
      }
      se.kind = s.kind;
      se.verbs = s.verbs;
      entries.push(se);
    }
  }
  entries.sort((a, b) => ((a.name as string) < (b.name as string) ? -1 : 1));
  // the core group's list carries no apiVersion (as kube-apiserver writes /api/v1)
  const head: Record<string, unknown> = { kind: 'APIResourceList' };
  if (group !== '') head.apiVersion = 'v1';
  return { ...head, groupVersion: gvString(group, version), resources: entries };
}

function resourceDiscovery(r: ResourceDef): Record<string, unknown> {
  const e: Record<string, unknown> = {
    resource: r.resource,
    responseKind: { group: '', version: '', kind: r.kind },
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.singular,
    verbs: r.verbs,
  };
  if (r.shortNames) e.shortNames = r.shortNames;
  if (r.categories) e.categories = r.categories;
  if (r.subresources?.length) {
    e.subresources = [...r.subresources]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((s) => ({
        subresource: s.name,
        responseKind: { group: s.group ?? '', version: s.version ?? '', kind: s.kind },
        verbs: s.verbs,
      }));
  }
  return e;
}

function versionDiscovery(resources: readonly ResourceDef[], group: string, version: string) {
  return {
    version,
    resources: resources
      .filter((r) => r.group === group && r.version === version)
      .sort((a, b) => (a.resource < b.resource ? -1 : 1))
      .map(resourceDiscovery),
    freshness: 'Current',
  };
}

export function aggregated(
  resources: readonly ResourceDef[],
  which: 'legacy' | 'apis',
  version: 'v2' | 'v2beta1',
): unknown {
  const items =
    which === 'legacy'
      ? [{ metadata: {}, versions: [versionDiscovery(resources, '', 'v1')] }]
      : groupOrder(resources).map((g) => ({
          metadata: { name: g.group },
          versions: g.versions.map((v) => versionDiscovery(resources, g.group, v)),
        }));
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items,
  };
}

/** GET /version, like a real kube-apiserver's (emulation fields appear from 1.33 on). */
export function versionInfo(gitVersion: string): Record<string, string> {
  const m = /^v?(\d+)\.(\d+)/.exec(gitVersion);
  const major = m?.[1] ?? '1';
  const minor = m?.[2] ?? '0';
  const out: Record<string, string> = { major, minor };
  if (Number(major) > 1 || Number(minor) >= 33) {
    out.emulationMajor = major;
    out.emulationMinor = minor;
    out.minCompatibilityMajor = major;
    out.minCompatibilityMinor = String(Math.max(0, Number(minor) - 1));
  }
  out.gitVersion = gitVersion.startsWith('v') ? gitVersion : `v${gitVersion}`;
  out.gitCommit = sha256Hex(`commit ${gitVersion}`).slice(0, 40);
  out.gitTreeState = 'clean';
  out.buildDate = '2025-12-17T12:00:00Z';
  out.goVersion = Number(minor) >= 33 ? 'go1.24.6' : 'go1.22.1';
  out.compiler = 'gc';
  out.platform = 'linux/amd64';
  return out;
}
