/**
 * A small simulated Karmada propagation (karmada-controller-manager's detector, binding and execution
 * controllers, the scheduler's static placement), one pass per call: for every PropagationPolicy of the
 * control plane, each template its resourceSelectors name gets a ResourceBinding (for a
 * ClusterPropagationPolicy and a cluster-scoped template, a ClusterResourceBinding: `Keys`; spec.clusters from
 * `placement.clusterAffinity.clusterNames`, replicas divided by static weight or duplicated), a Work per
 * cluster in `karmada-es-<cluster>` whose manifest is the template after the namespace's OverridePolicies
 * (plaintext and imageOverrider), and that manifest applied to the member, with the labels and annotations
 * Karmada v1.18 writes. A member copy that differs from its manifest is put back, as Karmada's
 * work-status controller does, unless the policy suspends dispatching (`spec.suspension.dispatching`).
 * The binding's `status.aggregatedStatus` follows the copies (applied, health).
 *
 * Written from Karmada's behaviour, sharing nothing with src/ (the simulator is the fleet's oracle).
 */
import type { KubeObject, ResourceDef } from './catalog/types.ts';
import type { SimCluster } from './cluster.ts';
import type { SimKarmada } from './karmada.ts';
import { prepareForCreate } from './kinds.ts';

type Obj = KubeObject & Record<string, any>;

const PP = { group: 'policy.karmada.io', version: 'v1alpha1', resource: 'propagationpolicies' };
const CPP = { group: 'policy.karmada.io', version: 'v1alpha1', resource: 'clusterpropagationpolicies' };
const OP = { group: 'policy.karmada.io', version: 'v1alpha1', resource: 'overridepolicies' };
const RB = { group: 'work.karmada.io', version: 'v1alpha2', resource: 'resourcebindings' };
const CRB = { group: 'work.karmada.io', version: 'v1alpha2', resource: 'clusterresourcebindings' };
const WORK = { group: 'work.karmada.io', version: 'v1alpha1', resource: 'works' };
const NS = { group: '', version: 'v1', resource: 'namespaces' };

const POLICY_ID = 'propagationpolicy.karmada.io/permanent-id';
const CLUSTER_POLICY_ID = 'clusterpropagationpolicy.karmada.io/permanent-id';
const BINDING_ID = 'resourcebinding.karmada.io/permanent-id';
const CLUSTER_BINDING_ID = 'clusterresourcebinding.karmada.io/permanent-id';

/**
 * What a policy and its binding write, by their kind. A PropagationPolicy binds the templates of its
 * namespace with ResourceBindings; a ClusterPropagationPolicy binds cluster-scoped templates with
 * ClusterResourceBindings (Karmada's detector: BuildClusterResourceBinding, AddCPPClaimMetadata; its binding
 * controller's mergeLabels and mergeAnnotations for the Works and manifests). A namespaced template a
 * ClusterPropagationPolicy names is not simulated.
 */
interface Keys {
  policy: typeof PP;
  policyIdLabel: string;
  /** the claim annotations a policy puts on its templates and bindings */
  policyAnnotations(pp: Obj): Record<string, string>;
  binding: typeof RB;
  bindingKind: string;
  bindingIdLabel: string;
  bindingFinalizer: string;
  /** the annotations naming the binding on its Works and on the manifests (so on the copies) */
  bindingAnnotations(rbName: string, ns: string | undefined): Record<string, string>;
}

const NAMESPACED: Keys = {
  policy: PP,
  policyIdLabel: POLICY_ID,
  policyAnnotations: (pp) => ({
    'propagationpolicy.karmada.io/name': String(pp.metadata.name),
    'propagationpolicy.karmada.io/namespace': String(pp.metadata.namespace),
  }),
  binding: RB,
  bindingKind: 'ResourceBinding',
  bindingIdLabel: BINDING_ID,
  bindingFinalizer: 'karmada.io/binding-controller',
  bindingAnnotations: (rbName, ns) => ({
    'resourcebinding.karmada.io/name': rbName,
    'resourcebinding.karmada.io/namespace': String(ns),
  }),
};

const CLUSTER_SCOPED: Keys = {
  policy: CPP,
  policyIdLabel: CLUSTER_POLICY_ID,
  policyAnnotations: (pp) => ({ 'clusterpropagationpolicy.karmada.io/name': String(pp.metadata.name) }),
  binding: CRB,
  bindingKind: 'ClusterResourceBinding',
  bindingIdLabel: CLUSTER_BINDING_ID,
  bindingFinalizer: 'karmada.io/cluster-resource-binding-controller',
  bindingAnnotations: (rbName) => ({ 'clusterresourcebinding.karmada.io/name': rbName }),
};
const WORK_ID = 'work.karmada.io/permanent-id';

/** One propagation pass over the control plane's policies. */
export function propagate(karmada: SimKarmada): void {
  for (const keys of [NAMESPACED, CLUSTER_SCOPED])
    for (const pp of karmada.list(keys.policy) as Obj[]) {
      for (const sel of pp.spec?.resourceSelectors ?? []) {
        const def = defOf(karmada, sel.apiVersion, sel.kind);
        if (!def || !sel.name || def.namespaced !== (keys === NAMESPACED)) continue;
        const template = karmada.get(def, pp.metadata.namespace, sel.name) as Obj | undefined;
        if (template) propagateOne(karmada, keys, pp, def, template);
      }
    }
  collectOrphans(karmada);
}

/** The binding a Work (or a copy) names with its annotations: its kind's keys, and its namespace/name. */
function bindingNamed(
  a: Record<string, any>,
): { keys: Keys; ns: string | undefined; name: string } | undefined {
  if (typeof a['resourcebinding.karmada.io/name'] === 'string')
    return {
      keys: NAMESPACED,
      ns: a['resourcebinding.karmada.io/namespace'],
      name: a['resourcebinding.karmada.io/name'],
    };
  if (typeof a['clusterresourcebinding.karmada.io/name'] === 'string')
    return { keys: CLUSTER_SCOPED, ns: undefined, name: a['clusterresourcebinding.karmada.io/name'] };
  return undefined;
}

/**
 * A template that is gone takes its binding, Works and the copies in the members with it, as Karmada's
 * garbage collection (the binding is owned by its template, the Works by the binding) and its execution
 * controller remove them. Walked from the Works: the binding may already be gone with its owner.
 */
function collectOrphans(karmada: SimKarmada): void {
  const templateOf = (r: any) => {
    const def = r && defOf(karmada, r.apiVersion, r.kind);
    return def ? { def, obj: karmada.get(def, r.namespace, r.name) } : undefined;
  };
  for (const work of karmada.list(WORK) as Obj[]) {
    const named = bindingNamed(work.metadata.annotations ?? {});
    const rb = named && karmada.get(named.keys.binding, named.ns, named.name);
    if (rb && templateOf((rb as Obj).spec?.resource)?.obj) continue;
    const manifest = work.spec?.workload?.manifests?.[0];
    const def = manifest && defOf(karmada, manifest.apiVersion, manifest.kind);
    const member = karmada.members.get(String(work.metadata.namespace).replace(/^karmada-es-/, ''));
    const copy =
      def && (member?.get(def, manifest.metadata.namespace, manifest.metadata.name) as Obj | undefined);
    // only a copy this binding made: Karmada's annotations on it name the binding
    const by = copy && bindingNamed(copy.metadata.annotations ?? {});
    if (by && named && by.keys === named.keys && by.name === named.name)
      member!.remove(def, manifest.metadata.namespace, manifest.metadata.name);
    finish(karmada, WORK, work);
  }
  for (const gvr of [RB, CRB])
    for (const rb of karmada.list(gvr) as Obj[])
      if (!templateOf(rb.spec?.resource)?.obj) finish(karmada, gvr, rb);
}

/** Deletes an object whose finalizer is the simulated controller's own: it lets go, then it is gone. */
function finish(c: SimCluster, gvr: typeof RB, obj: Obj): void {
  if (obj.metadata.finalizers?.length)
    c.update(gvr, { ...obj, metadata: { ...obj.metadata, finalizers: [] } });
  c.remove(gvr, obj.metadata.namespace, obj.metadata.name!);
}

function defOf(
  c: SimCluster,
  apiVersion: string,
  kind: string,
): (ResourceDef & { version: string }) | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return c.catalog.resources.find((r) => r.group === group && r.version === version && r.kind === kind);
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v));
}

function propagateOne(karmada: SimKarmada, keys: Keys, pp: Obj, def: ResourceDef, template: Obj): void {
  const ns = template.metadata.namespace as string | undefined;
  const name = template.metadata.name as string;
  const idLabel = keys.policyIdLabel;
  const policyId = (pp.metadata.labels?.[idLabel] as string | undefined) ?? crypto.randomUUID();
  if (!pp.metadata.labels?.[idLabel]) {
    pp.metadata.labels = { ...(pp.metadata.labels ?? {}), [idLabel]: policyId };
    karmada.update(keys.policy, pp);
  }
  // the detector claims the template for the policy
  if (template.metadata.labels?.[idLabel] !== policyId) {
    template.metadata.labels = { ...(template.metadata.labels ?? {}), [idLabel]: policyId };
    template.metadata.annotations = {
      ...(template.metadata.annotations ?? {}),
      ...keys.policyAnnotations(pp),
    };
    karmada.update(def, template);
  }

  const clusters: string[] = pp.spec?.placement?.clusterAffinity?.clusterNames ?? [];
  const total = typeof template.spec?.replicas === 'number' ? template.spec.replicas : undefined;
  const replicas = divide(total, clusters, pp.spec?.placement?.replicaScheduling);
  const rbName = `${name}-${def.kind.toLowerCase()}`;
  const existing = karmada.get(keys.binding, ns, rbName) as Obj | undefined;
  const bindingId =
    (existing?.metadata.labels?.[keys.bindingIdLabel] as string | undefined) ?? crypto.randomUUID();
  const suspended = pp.spec?.suspension?.dispatching === true;
  const aggregated: any[] = [];
  for (const cluster of clusters) {
    const member = karmada.members.get(cluster);
    const workNs = `karmada-es-${cluster}`;
    const workName = `${name}-${shortHash(`${def.kind}/${ns ?? ''}/${name}`)}`;
    const manifest = manifestFor(karmada, template, cluster, replicas.get(cluster), {
      keys,
      pp,
      policyId,
      rbName,
      bindingId,
      workNs,
      workName,
    });
    const oldWork = karmada.get(WORK, workNs, workName) as Obj | undefined;
    const work: Obj = {
      apiVersion: 'work.karmada.io/v1alpha1',
      kind: 'Work',
      metadata: {
        name: workName,
        namespace: workNs,
        labels: {
          [keys.bindingIdLabel]: bindingId,
          [WORK_ID]: oldWork?.metadata.labels?.[WORK_ID] ?? crypto.randomUUID(),
        },
        annotations: keys.bindingAnnotations(rbName, ns),
        finalizers: ['karmada.io/execution-controller'],
      },
      spec: { workload: { manifests: [manifest] }, ...(suspended ? { suspendDispatching: true } : {}) },
    };
    if (!karmada.get(NS, undefined, workNs)) {
      // as Karmada's cluster controller makes it through the API: with the namespace strategy's defaults
      const execution = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: workNs } } as Obj;
      prepareForCreate(karmada.resolve(NS), execution);
      karmada.create(NS, execution);
    }
    if (!oldWork) karmada.create(WORK, work);
    else if (JSON.stringify(oldWork.spec) !== JSON.stringify(work.spec))
      karmada.update(WORK, { ...oldWork, spec: work.spec });
    if (!member) continue;
    let copy = member.get(def, ns, name) as Obj | undefined;
    if (!suspended) copy = apply(member, def, manifest, copy);
    if (copy)
      aggregated.push({
        clusterName: cluster,
        applied: true,
        health: healthOf(copy),
        status: copy.status ?? {},
      });
  }

  const rb: Obj = {
    apiVersion: 'work.karmada.io/v1alpha2',
    kind: keys.bindingKind,
    metadata: {
      name: rbName,
      ...(ns ? { namespace: ns } : {}),
      labels: { [idLabel]: policyId, [keys.bindingIdLabel]: bindingId },
      annotations: keys.policyAnnotations(pp),
      ownerReferences: [
        {
          apiVersion: template.apiVersion,
          kind: template.kind,
          name,
          uid: template.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      finalizers: [keys.bindingFinalizer],
    },
    spec: {
      resource: {
        apiVersion: template.apiVersion,
        kind: template.kind,
        ...(ns ? { namespace: ns } : {}),
        name,
        uid: template.metadata.uid,
        resourceVersion: template.metadata.resourceVersion,
      },
      ...(total !== undefined ? { replicas: total } : {}),
      clusters: clusters.map((c) => (replicas.has(c) ? { name: c, replicas: replicas.get(c) } : { name: c })),
      placement: pp.spec?.placement,
      conflictResolution: pp.spec?.conflictResolution ?? 'Abort',
      schedulerName: 'default-scheduler',
    },
    status: {
      schedulerObservedGeneration: 1,
      conditions: [
        {
          type: 'Scheduled',
          status: 'True',
          reason: 'Success',
          message: 'Binding has been scheduled successfully.',
        },
      ],
      aggregatedStatus: aggregated,
    },
  };
  if (!existing) karmada.create(keys.binding, rb);
  else if (JSON.stringify([existing.spec, existing.status]) !== JSON.stringify([rb.spec, rb.status]))
    karmada.update(keys.binding, { ...existing, spec: rb.spec, status: rb.status });
}

/** Karmada's static-weight division: floor by weight, the remainder one by one to the heaviest first. */
function divide(total: number | undefined, clusters: string[], scheduling: any): Map<string, number> {
  const out = new Map<string, number>();
  if (total === undefined) return out;
  if (scheduling?.replicaSchedulingType !== 'Divided') {
    for (const c of clusters) out.set(c, total);
    return out;
  }
  const weights = clusters.map((c) => {
    const w = (scheduling.weightPreference?.staticWeightList ?? []).find((x: any) =>
      x.targetCluster?.clusterNames?.includes(c),
    );
    return { c, w: typeof w?.weight === 'number' ? w.weight : 1 };
  });
  const sum = weights.reduce((a, x) => a + x.w, 0) || 1;
  let left = total;
  for (const { c, w } of weights) {
    const n = Math.floor((total * w) / sum);
    out.set(c, n);
    left -= n;
  }
  const order = [...weights].sort((a, b) => b.w - a.w || a.c.localeCompare(b.c));
  for (let i = 0; left > 0; i = (i + 1) % order.length, left--)
    out.set(order[i]!.c, out.get(order[i]!.c)! + 1);
  return out;
}

interface Ids {
  keys: Keys;
  pp: Obj;
  policyId: string;
  rbName: string;
  bindingId: string;
  workNs: string;
  workName: string;
}

/** The template as Karmada writes it into a cluster's Work: cleaned, divided, overridden, labelled. */
function manifestFor(
  karmada: SimKarmada,
  template: Obj,
  cluster: string,
  replicas: number | undefined,
  ids: Ids,
): Obj {
  const t = clone(template);
  const md = t.metadata;
  const labels: Record<string, string> = { ...(md.labels ?? {}) };
  const annotations: Record<string, string> = { ...(md.annotations ?? {}) };
  const m: Obj = {
    apiVersion: t.apiVersion,
    kind: t.kind,
    metadata: { name: md.name, namespace: md.namespace, labels, annotations },
  };
  for (const [k, v] of Object.entries(t))
    if (!['apiVersion', 'kind', 'metadata', 'status'].includes(k)) m[k] = v;
  if (replicas !== undefined && m.spec) m.spec.replicas = replicas;
  const applied: any[] = [];
  // OverridePolicies are namespaced: a cluster-scoped template's would be ClusterOverridePolicies (not simulated)
  for (const op of md.namespace ? (karmada.list(OP, md.namespace) as Obj[]) : []) {
    const selected = (op.spec?.resourceSelectors ?? []).some(
      (s: any) => s.kind === t.kind && (!s.name || s.name === md.name),
    );
    if (!selected) continue;
    for (const rule of op.spec?.overrideRules ?? []) {
      const names: string[] | undefined = rule.targetCluster?.clusterNames;
      if (names && !names.includes(cluster)) continue;
      applyOverriders(m, rule.overriders ?? {});
      applied.push({ policyName: op.metadata.name, overriders: rule.overriders });
    }
  }
  labels[ids.keys.policyIdLabel] = ids.policyId;
  labels[ids.keys.bindingIdLabel] = ids.bindingId;
  labels['karmada.io/managed'] = 'true';
  Object.assign(annotations, {
    ...ids.keys.policyAnnotations(ids.pp),
    ...ids.keys.bindingAnnotations(ids.rbName, md.namespace),
    'resourcetemplate.karmada.io/uid': md.uid,
    'work.karmada.io/name': ids.workName,
    'work.karmada.io/namespace': ids.workNs,
  });
  if (applied.length) annotations['policy.karmada.io/applied-overrides'] = JSON.stringify(applied);
  return m;
}

/** plaintext (JSON pointer add/replace/remove) and imageOverrider (Registry/Repository/Tag) overriders. */
function applyOverriders(m: Obj, overriders: any): void {
  for (const p of overriders.plaintext ?? []) {
    const keys = String(p.path ?? '')
      .split('/')
      .slice(1)
      .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (keys.length === 0) continue;
    let at: any = m;
    for (const k of keys.slice(0, -1)) {
      at[k] ??= {};
      at = at[k];
    }
    const last = keys[keys.length - 1]!;
    if (p.operator === 'remove') delete at[last];
    else at[last] = clone(p.value);
  }
  for (const io of overriders.imageOverrider ?? []) {
    for (const c of m.spec?.template?.spec?.containers ?? []) {
      const at = c.image.lastIndexOf(':');
      const [repo, tag] =
        at > c.image.lastIndexOf('/') ? [c.image.slice(0, at), c.image.slice(at + 1)] : [c.image, ''];
      if (io.component === 'Tag') c.image = `${repo}:${io.value}`;
      else if (io.component === 'Registry')
        c.image = `${io.value}/${repo.split('/').slice(1).join('/') || repo}${tag ? `:${tag}` : ''}`;
    }
  }
}

/** Creates the copy, or puts a copy that strays from the manifest back (members' own fields kept). */
function apply(member: SimCluster, def: ResourceDef, manifest: Obj, copy: Obj | undefined): Obj {
  if (!copy) return member.create(def, clone(manifest)) as Obj;
  const labels = { ...(copy.metadata.labels ?? {}), ...manifest.metadata.labels };
  const annotations = { ...(copy.metadata.annotations ?? {}), ...manifest.metadata.annotations };
  const same =
    JSON.stringify(labels) === JSON.stringify(copy.metadata.labels ?? {}) &&
    JSON.stringify(annotations) === JSON.stringify(copy.metadata.annotations ?? {}) &&
    Object.keys(manifest).every(
      (k) =>
        ['apiVersion', 'kind', 'metadata'].includes(k) ||
        JSON.stringify(manifest[k]) === JSON.stringify(copy[k]),
    );
  if (same) return copy;
  const next: Obj = { ...clone(copy), ...clone(manifest) };
  next.metadata = { ...clone(copy.metadata), labels, annotations };
  if (copy.status) next.status = clone(copy.status);
  if (JSON.stringify(copy.spec) !== JSON.stringify(next.spec))
    next.metadata.generation = (copy.metadata.generation ?? 1) + 1;
  return member.update(def, next) as Obj;
}

/** Karmada's default health interpretation for a Deployment (every wanted replica updated and ready). */
function healthOf(copy: Obj): string {
  if (copy.kind !== 'Deployment') return 'Healthy';
  const want = copy.spec?.replicas ?? 1;
  const s = copy.status ?? {};
  return (s.readyReplicas ?? 0) >= want && (s.updatedReplicas ?? 0) >= want ? 'Healthy' : 'Unhealthy';
}

/** A short stable hash (Karmada's work names end in an FNV hash of the kind, namespace and name). */
function shortHash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0').slice(0, 8);
}
