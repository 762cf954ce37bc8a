/**
 * Per-kind create/update strategy (the bits of pkg/registry/<group>/<kind>/strategy.go and the API
 * defaulters that clients can see): defaults, status reset, which resources return the deleted object.
 */

import type { KubeObject, ResourceDef } from './catalog/types.ts';

type Obj = KubeObject & Record<string, any>;

/** Store.ReturnDeletedObject: these answer DELETE with the object, the rest with a Success Status. */
export function returnsDeletedObject(def: ResourceDef): boolean {
  return !!def.custom || (def.group === '' && ['pods', 'services', 'namespaces'].includes(def.resource));
}

/** AllowCreateOnUpdate: PUT of a missing object creates it. */
export function allowsCreateOnUpdate(def: ResourceDef): boolean {
  return (
    (def.group === '' && ['events', 'endpoints', 'nodes'].includes(def.resource)) ||
    (def.group === 'coordination.k8s.io' && def.resource === 'leases') ||
    (def.group === 'events.k8s.io' && def.resource === 'events')
  );
}

export function hasStatusSubresource(def: ResourceDef): boolean {
  return !!def.subresources?.some((s) => s.name === 'status');
}

/** metadata.generation is tracked for objects with a spec (not for configmaps, namespaces, services...). */
export function tracksGeneration(def: ResourceDef, obj: KubeObject): boolean {
  if (def.custom) return true;
  if (
    def.group === '' &&
    ['namespaces', 'services', 'nodes', 'persistentvolumes', 'persistentvolumeclaims'].includes(def.resource)
  ) {
    return false;
  }
  return 'spec' in obj;
}

function defaultContainers(list: any[] | undefined): void {
  for (const c of list ?? []) {
    const image: string = c.image ?? '';
    const tag = image.includes('@') ? 'digest' : (image.split('/').pop()!.split(':')[1] ?? 'latest');
    c.imagePullPolicy ??= tag === 'latest' ? 'Always' : 'IfNotPresent';
    c.resources ??= {};
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    for (const p of c.ports ?? []) p.protocol ??= 'TCP';
  }
}

export function defaultPodSpec(spec: any): void {
  if (!spec) return;
  defaultContainers(spec.containers);
  defaultContainers(spec.initContainers);
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.securityContext ??= {};
  spec.schedulerName ??= 'default-scheduler';
  spec.enableServiceLinks ??= true;
}

let ipCounter = 10;

export function nextServiceIp(): string {
  ipCounter++;
  return `10.96.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

/** Defaults and status reset for a create through the API (not for direct store writes, which keep everything). */
export function prepareForCreate(def: ResourceDef, obj: Obj): void {
  const core = def.group === '';
  if (hasStatusSubresource(def) && !(core && def.resource === 'namespaces')) delete obj.status;
  if (core && def.resource === 'pods') {
    defaultPodSpec(obj.spec);
    obj.spec ??= {};
    obj.spec.serviceAccountName ??= 'default';
    obj.spec.serviceAccount ??= obj.spec.serviceAccountName;
    obj.spec.priority ??= 0;
    obj.spec.preemptionPolicy ??= 'PreemptLowerPriority';
    obj.spec.tolerations ??= [
      {
        key: 'node.kubernetes.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
      {
        key: 'node.kubernetes.io/unreachable',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
    ];
    obj.status = { phase: 'Pending', qosClass: 'BestEffort' };
  } else if (core && def.resource === 'namespaces') {
    obj.metadata.labels = {
      ...(obj.metadata.labels ?? {}),
      'kubernetes.io/metadata.name': obj.metadata.name ?? '',
    };
    obj.spec = { finalizers: ['kubernetes'], ...(obj.spec ?? {}) };
    obj.status = { phase: 'Active' };
  } else if (core && def.resource === 'services') {
    obj.spec ??= {};
    const s = obj.spec;
    s.type ??= 'ClusterIP';
    if (s.type !== 'ExternalName') {
      s.clusterIP ??= nextServiceIp();
      s.clusterIPs ??= [s.clusterIP];
      s.ipFamilies ??= ['IPv4'];
      s.ipFamilyPolicy ??= 'SingleStack';
      s.internalTrafficPolicy ??= 'Cluster';
    }
    s.sessionAffinity ??= 'None';
    for (const p of s.ports ?? []) {
      p.protocol ??= 'TCP';
      p.targetPort ??= p.port;
    }
    obj.status = { loadBalancer: {} };
  } else if (def.group === 'apps' && def.resource === 'deployments') {
    obj.spec ??= {};
    obj.spec.replicas ??= 1;
    obj.spec.revisionHistoryLimit ??= 10;
    obj.spec.progressDeadlineSeconds ??= 600;
    obj.spec.strategy ??= {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' },
    };
    defaultPodSpec(obj.spec.template?.spec);
    obj.status = {};
  } else if (def.group === 'apps' && (def.resource === 'replicasets' || def.resource === 'statefulsets')) {
    obj.spec ??= {};
    obj.spec.replicas ??= 1;
    defaultPodSpec(obj.spec.template?.spec);
    obj.status = { replicas: 0 };
  } else if (core && (def.resource === 'configmaps' || def.resource === 'secrets')) {
    if (def.resource === 'secrets') obj.type ??= 'Opaque';
  }
}

const isEmptyMap = (v: unknown) =>
  !!v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0;

/**
 * What decoding into kube's Go types does to a built-in object before it is stored: empty map fields vanish
 * (omitempty), and a Secret's stringData is folded into data (base64) and dropped.
 */
export function decodeLikeKube(def: ResourceDef, obj: Obj): void {
  if (def.custom) return;
  if (
    def.group === '' &&
    def.resource === 'secrets' &&
    obj.stringData &&
    typeof obj.stringData === 'object'
  ) {
    const data: Record<string, string> = { ...(obj.data ?? {}) };
    for (const [k, v] of Object.entries(obj.stringData as Record<string, string>))
      data[k] = btoa(String.fromCharCode(...new TextEncoder().encode(String(v))));
    obj.data = data;
    delete obj.stringData;
  }
  for (const k of ['data', 'binaryData']) if (isEmptyMap(obj[k])) delete obj[k];
  for (const k of ['labels', 'annotations']) if (isEmptyMap(obj.metadata?.[k])) delete obj.metadata[k];
}
