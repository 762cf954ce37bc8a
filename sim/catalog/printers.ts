/**
 * Server-side Table printers, column for column like kube-apiserver's
 * (kubernetes/kubernetes pkg/printers/internalversion/printers.go; the default table convertor of
 * k8s.io/apiserver pkg/registry/rest/table.go; the CRD convertor for additionalPrinterColumns).
 * Tables from kube-apiserver always carry the wide (priority 1) cells too.
 */
import { age, humanDuration } from './duration.ts';
import type { ColumnDefinition, KubeObject, TablePrinter } from './types.ts';

type Obj = Record<string, any>;

// ObjectMeta descriptions as the apiserver sends them (shared/fixtures/kube-wire/table_get_pod_kubectl-v1.29.3.json)
export const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
export const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

const CONTAINERS_DESC = 'Names of each container in the template.';
const IMAGES_DESC = 'Images referenced by each container in the template.';
const READY_PODS_DESC = 'Number of the pod with ready state';
const LABEL_SELECTORS =
  'https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors';

function col(
  name: string,
  description: string,
  type: ColumnDefinition['type'] = 'string',
  priority = 0,
): ColumnDefinition {
  return { name, type, format: name === 'Name' ? 'name' : '', description, priority };
}
const nameCol = (): ColumnDefinition => col('Name', NAME_DESCRIPTION);
const ageCol = (): ColumnDefinition => col('Age', CREATION_TIMESTAMP_DESCRIPTION);

const meta = (o: KubeObject) => o.metadata ?? {};
const objName = (o: KubeObject): string => meta(o).name ?? '';
const objAge = (o: KubeObject, now: Date): string => age(meta(o).creationTimestamp, now);
const int = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** labels.FormatLabels: sorted k=v pairs, "<none>" when empty */
export function formatLabels(m: Record<string, string> | undefined | null): string {
  const keys = Object.keys(m ?? {}).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${m![k]}`).join(',');
}

/** labels.Selector.String() of a metav1.LabelSelector ('' for none/everything) */
export function selectorString(sel: Obj | undefined | null): string {
  if (!sel) return '';
  const parts: Array<[string, string]> = [];
  for (const [k, v] of Object.entries((sel.matchLabels ?? {}) as Record<string, string>))
    parts.push([k, `${k}=${v}`]);
  for (const e of (sel.matchExpressions ?? []) as Obj[]) {
    const values = [...((e.values ?? []) as string[])].sort().join(',');
    switch (e.operator) {
      case 'In':
        parts.push([e.key, `${e.key} in (${values})`]);
        break;
      case 'NotIn':
        parts.push([e.key, `${e.key} notin (${values})`]);
        break;
      case 'Exists':
        parts.push([e.key, e.key]);
        break;
      case 'DoesNotExist':
        parts.push([e.key, `!${e.key}`]);
        break;
    }
  }
  parts.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return parts.map((p) => p[1]).join(',');
}

function podTemplateSpec(o: Obj): Obj {
  return (o.spec?.template?.spec ?? {}) as Obj;
}

/** layoutContainerCells: container names and images, comma-joined */
function containerCells(podSpec: Obj): [string, string] {
  const cs = (podSpec.containers ?? []) as Obj[];
  return [cs.map((c) => c.name ?? '').join(','), cs.map((c) => c.image ?? '').join(',')];
}

// ---------------------------------------------------------------------------------------------- pods

function podCells(obj: KubeObject, now: Date): unknown[] {
  const pod = obj as Obj;
  const spec = (pod.spec ?? {}) as Obj;
  const status = (pod.status ?? {}) as Obj;
  const initSpecs = (spec.initContainers ?? []) as Obj[];
  const isRestartable = (name: string) => initSpecs.find((c) => c.name === name)?.restartPolicy === 'Always';
  let restarts = 0;
  let restartableInitRestarts = 0;
  let totalContainers = ((spec.containers ?? []) as Obj[]).length;
  let readyContainers = 0;
  let lastRestart = 0;
  let lastRestartableInitRestart = 0;
  let reason: string = status.reason || status.phase || '';
  for (const c of (status.conditions ?? []) as Obj[]) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }
  for (const c of initSpecs) if (c.restartPolicy === 'Always') totalContainers++;

  const finishedAt = (cs: Obj): number => {
    const t = cs.lastState?.terminated?.finishedAt;
    return t ? Date.parse(t) || 0 : 0;
  };
  let initializing = false;
  const initStatuses = (status.initContainerStatuses ?? []) as Obj[];
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i]!;
    restarts += int(c.restartCount);
    lastRestart = Math.max(lastRestart, finishedAt(c));
    if (isRestartable(c.name)) {
      restartableInitRestarts += int(c.restartCount);
      lastRestartableInitRestart = Math.max(lastRestartableInitRestart, finishedAt(c));
    }
    const term = c.state?.terminated as Obj | undefined;
    const wait = c.state?.waiting as Obj | undefined;
    if (term && int(term.exitCode) === 0) continue;
    if (isRestartable(c.name) && c.started === true) {
      if (c.ready) readyContainers++;
      continue;
    }
    if (term) {
      if (!term.reason) {
        reason = term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${int(term.exitCode)}`;
      } else reason = `Init:${term.reason}`;
    } else if (wait?.reason && wait.reason !== 'PodInitializing') {
      reason = `Init:${wait.reason}`;
    } else {
      reason = `Init:${i}/${initSpecs.length}`;
    }
    initializing = true;
    break;
  }
  const initializedTrue = ((status.conditions ?? []) as Obj[]).some(
    (c) => c.type === 'Initialized' && c.status === 'True',
  );
  if (!initializing || initializedTrue) {
    restarts = restartableInitRestarts;
    lastRestart = lastRestartableInitRestart;
    let hasRunning = false;
    const statuses = (status.containerStatuses ?? []) as Obj[];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i]!;
      restarts += int(c.restartCount);
      lastRestart = Math.max(lastRestart, finishedAt(c));
      const wait = c.state?.waiting as Obj | undefined;
      const term = c.state?.terminated as Obj | undefined;
      if (wait?.reason) reason = wait.reason;
      else if (term?.reason) reason = term.reason;
      else if (term) reason = term.signal ? `Signal:${term.signal}` : `ExitCode:${int(term.exitCode)}`;
      else if (c.ready && c.state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      const ready = ((status.conditions ?? []) as Obj[]).some(
        (c) => c.type === 'Ready' && c.status === 'True',
      );
      reason = ready ? 'Running' : 'NotReady';
    }
  }
  const deleting = !!meta(obj).deletionTimestamp;
  if (deleting && status.reason === 'NodeLost') reason = 'Unknown';
  else if (deleting && status.phase !== 'Succeeded' && status.phase !== 'Failed') reason = 'Terminating';

  let restartsStr = String(restarts);
  if (restarts !== 0 && lastRestart > 0)
    restartsStr = `${restarts} (${humanDuration(now.getTime() - lastRestart)} ago)`;

  const podIP: string = ((status.podIPs ?? []) as Obj[])[0]?.ip || status.podIP || '<none>';
  const gates = (spec.readinessGates ?? []) as Obj[];
  let readinessGates = '<none>';
  if (gates.length > 0) {
    let trueConditions = 0;
    for (const g of gates) {
      const c = ((status.conditions ?? []) as Obj[]).find((x) => x.type === g.conditionType);
      if (c?.status === 'True') trueConditions++;
    }
    readinessGates = `${trueConditions}/${gates.length}`;
  }
  return [
    objName(obj),
    `${readyContainers}/${totalContainers}`,
    reason,
    restartsStr,
    objAge(obj, now),
    podIP,
    spec.nodeName || '<none>',
    status.nominatedNodeName || '<none>',
    readinessGates,
  ];
}

export const podPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'The aggregate status of the containers in this pod.'),
    col(
      'Restarts',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    ageCol(),
    col(
      'IP',
      'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
      'string',
      1,
    ),
    col(
      'Node',
      'NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.',
      'string',
      1,
    ),
    col(
      'Nominated Node',
      'nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.',
      'string',
      1,
    ),
    col(
      'Readiness Gates',
      'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
      'string',
      1,
    ),
  ],
  cells: podCells,
};

// ------------------------------------------------------------------------------------ core, others

export const namespacePrinter: TablePrinter = {
  columns: [nameCol(), col('Status', 'The status of the namespace'), ageCol()],
  cells: (o, now) => [objName(o), String((o as Obj).status?.phase ?? ''), objAge(o, now)],
};

function portString(ports: Obj[] | undefined): string {
  return (ports ?? [])
    .map((p) =>
      p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol ?? 'TCP'}` : `${p.port}/${p.protocol ?? 'TCP'}`,
    )
    .join(',');
}

function serviceExternalIP(svc: Obj): string {
  const spec = (svc.spec ?? {}) as Obj;
  const externalIPs = (spec.externalIPs ?? []) as string[];
  switch (spec.type ?? 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = ((svc.status?.loadBalancer?.ingress ?? []) as Obj[]).map(
        (i) => i.ip || i.hostname || '',
      );
      const all = [...ingress.filter(Boolean), ...externalIPs];
      if (all.length === 0) return '<pending>';
      const s = all.join(',');
      return s;
    }
    case 'ExternalName':
      return spec.externalName ?? '';
  }
  return '<unknown>';
}

export const servicePrinter: TablePrinter = {
  columns: [
    nameCol(),
    col(
      'Type',
      'type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. "ExternalName" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types',
    ),
    col(
      'Cluster-IP',
      'clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are "None", empty string (""), or a valid IP address. Setting this to "None" makes a "headless service" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
    ),
    col(
      'External-IP',
      'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.',
    ),
    col(
      'Port(s)',
      'The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
    ),
    ageCol(),
    col(
      'Selector',
      'Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/',
      'string',
      1,
    ),
  ],
  cells: (o, now) => {
    const svc = o as Obj;
    const spec = (svc.spec ?? {}) as Obj;
    const clusterIPs = (spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : [])) as string[];
    return [
      objName(o),
      spec.type ?? 'ClusterIP',
      clusterIPs[0] ?? '<none>',
      serviceExternalIP(svc),
      portString(spec.ports) || '<none>',
      objAge(o, now),
      formatLabels(spec.selector),
    ];
  },
};

export const configMapPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col(
      'Data',
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
    ),
    ageCol(),
  ],
  cells: (o, now) => [
    objName(o),
    Object.keys((o as Obj).data ?? {}).length + Object.keys((o as Obj).binaryData ?? {}).length,
    objAge(o, now),
  ],
};

export const secretPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col(
      'Type',
      'Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types',
    ),
    col(
      'Data',
      "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    ageCol(),
  ],
  cells: (o, now) => [
    objName(o),
    String((o as Obj).type ?? 'Opaque'),
    Object.keys((o as Obj).data ?? {}).length,
    objAge(o, now),
  ],
};

// kube 1.35 prints a ServiceAccount with Name and Age only (measured against a real member)
export const serviceAccountPrinter: TablePrinter = {
  columns: [nameCol(), ageCol()],
  cells: (o, now) => [objName(o), objAge(o, now)],
};

function eventSource(ev: Obj): string {
  const component = ev.source?.component || ev.reportingController || '';
  const host = ev.source?.component ? ev.source?.host || '' : ev.reportingInstance || '';
  return host ? `${component}, ${host}` : component;
}

/** events.k8s.io/v1 Events carry the core fields under other names; the apiserver prints both alike. */
function coreEvent(ev: Obj): Obj {
  if (ev.involvedObject || !ev.regarding) return ev;
  return {
    ...ev,
    involvedObject: ev.regarding,
    message: ev.note,
    firstTimestamp: ev.deprecatedFirstTimestamp,
    lastTimestamp: ev.deprecatedLastTimestamp,
    count: ev.deprecatedCount,
    source: ev.deprecatedSource,
  };
}

export const eventPrinter: TablePrinter = {
  columns: [
    col('Last Seen', 'The time at which the most recent occurrence of this event was recorded.'),
    col('Type', 'Type of this event (Normal, Warning), new types could be added in the future'),
    col(
      'Reason',
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    col('Object', 'The object that this event is about.'),
    col(
      'Subobject',
      'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
      'string',
      1,
    ),
    col(
      'Source',
      'The component reporting this event. Should be a short machine understandable string.',
      'string',
      1,
    ),
    col('Message', 'A human-readable description of the status of this operation.'),
    col(
      'First Seen',
      'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
      'string',
      1,
    ),
    col('Count', 'The number of times this event has occurred.', 'string', 1),
    { ...nameCol(), priority: 1 },
  ],
  cells: (o, now) => {
    const ev = coreEvent(o as Obj);
    const first = ev.firstTimestamp ? age(ev.firstTimestamp, now) : age(ev.eventTime, now);
    let last = ev.lastTimestamp ? age(ev.lastTimestamp, now) : first;
    let count = int(ev.count);
    if (ev.series) {
      last = age(ev.series.lastObservedTime, now);
      count = int(ev.series.count);
    } else if (count === 0) count = 1;
    const io = (ev.involvedObject ?? {}) as Obj;
    const kind = String(io.kind ?? '').toLowerCase();
    const target = io.name ? `${kind}/${io.name}` : kind;
    return [
      last,
      ev.type ?? '',
      ev.reason ?? '',
      target,
      io.fieldPath ?? '',
      eventSource(ev),
      String(ev.message ?? '').trim(),
      first,
      count,
      objName(o),
    ];
  },
};

function nodeStatus(node: Obj): string {
  const conds = (node.status?.conditions ?? []) as Obj[];
  const ready = conds.find((c) => c.type === 'Ready');
  const out: string[] = [];
  if (ready) out.push(ready.status === 'True' ? 'Ready' : 'NotReady');
  if (out.length === 0) out.push('Unknown');
  if (node.spec?.unschedulable) out.push('SchedulingDisabled');
  return out.join(',');
}

function nodeRoles(node: Obj): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries((node.metadata?.labels ?? {}) as Record<string, string>)) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const r = k.slice('node-role.kubernetes.io/'.length);
      if (r) roles.add(r);
    } else if (k === 'kubernetes.io/role' && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : '<none>';
}

function nodeAddress(node: Obj, type: string): string {
  const a = ((node.status?.addresses ?? []) as Obj[]).find((x) => x.type === type);
  return a?.address || '<none>';
}

export const nodePrinter: TablePrinter = {
  columns: [
    nameCol(),
    col('Status', 'The status of the node'),
    col('Roles', 'The roles of the node'),
    ageCol(),
    col('Version', 'Kubelet Version reported by the node.'),
    col('Internal-IP', NODE_ADDRESSES_DESC(), 'string', 1),
    col('External-IP', NODE_ADDRESSES_DESC(), 'string', 1),
    col(
      'OS-Image',
      'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).',
      'string',
      1,
    ),
    col(
      'Kernel-Version',
      "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
      'string',
      1,
    ),
    col(
      'Container-Runtime',
      'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).',
      'string',
      1,
    ),
  ],
  cells: (o, now) => {
    const n = o as Obj;
    const info = (n.status?.nodeInfo ?? {}) as Obj;
    return [
      objName(o),
      nodeStatus(n),
      nodeRoles(n),
      objAge(o, now),
      info.kubeletVersion ?? '',
      nodeAddress(n, 'InternalIP'),
      nodeAddress(n, 'ExternalIP'),
      info.osImage || '<unknown>',
      info.kernelVersion || '<unknown>',
      info.containerRuntimeVersion || '<unknown>',
    ];
  },
};

function NODE_ADDRESSES_DESC(): string {
  return "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";
}

function formatEndpoints(ep: Obj): string {
  const list: string[] = [];
  let count = 0;
  const max = 3;
  for (const ss of (ep.subsets ?? []) as Obj[]) {
    const ports = (ss.ports ?? []) as Obj[];
    for (const addr of (ss.addresses ?? []) as Obj[]) {
      if (ports.length === 0) {
        if (list.length < max) list.push(addr.ip);
        count++;
        continue;
      }
      for (const p of ports) {
        if (list.length < max) list.push(`${addr.ip}:${p.port}`);
        count++;
      }
    }
  }
  if (count === 0) return '<none>';
  let s = list.join(',');
  if (count > max) s += ` + ${count - max} more...`;
  return s;
}

export const endpointsPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col(
      'Endpoints',
      'The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.',
    ),
    ageCol(),
  ],
  cells: (o, now) => [objName(o), formatEndpoints(o as Obj), objAge(o, now)],
};

// --------------------------------------------------------------------------------------- workloads

export const deploymentPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col('Ready', READY_PODS_DESC),
    col(
      'Up-to-date',
      'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
      'integer',
    ),
    col(
      'Available',
      'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
      'integer',
    ),
    ageCol(),
    col('Containers', CONTAINERS_DESC, 'string', 1),
    col('Images', IMAGES_DESC, 'string', 1),
    col(
      'Selector',
      'Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.',
      'string',
      1,
    ),
  ],
  cells: (o, now) => {
    const d = o as Obj;
    const desired = d.spec?.replicas ?? 1;
    const [containers, images] = containerCells(podTemplateSpec(d));
    return [
      objName(o),
      `${int(d.status?.readyReplicas)}/${desired}`,
      int(d.status?.updatedReplicas),
      int(d.status?.availableReplicas),
      objAge(o, now),
      containers,
      images,
      selectorString(d.spec?.selector),
    ];
  },
};

export const replicaSetPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col(
      'Desired',
      'Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller',
      'integer',
    ),
    col(
      'Current',
      'Replicas is the most recently oberved number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller/#what-is-a-replicationcontroller',
      'integer',
    ),
    col('Ready', 'The number of ready replicas for this replica set.', 'integer'),
    ageCol(),
    col('Containers', CONTAINERS_DESC, 'string', 1),
    col('Images', IMAGES_DESC, 'string', 1),
    col(
      'Selector',
      `Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: ${LABEL_SELECTORS}`,
      'string',
      1,
    ),
  ],
  cells: (o, now) => {
    const r = o as Obj;
    const [containers, images] = containerCells(podTemplateSpec(r));
    return [
      objName(o),
      r.spec?.replicas ?? 1,
      int(r.status?.replicas),
      int(r.status?.readyReplicas),
      objAge(o, now),
      containers,
      images,
      selectorString(r.spec?.selector),
    ];
  },
};

export const daemonSetPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col(
      'Desired',
      'The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/',
      'integer',
    ),
    col(
      'Current',
      'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/',
      'integer',
    ),
    col(
      'Ready',
      'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.',
      'integer',
    ),
    col('Up-to-date', 'The total number of nodes that are running updated daemon pod', 'integer'),
    col(
      'Available',
      'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)',
      'integer',
    ),
    col(
      'Node Selector',
      "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/",
    ),
    ageCol(),
    col('Containers', CONTAINERS_DESC, 'string', 1),
    col('Images', IMAGES_DESC, 'string', 1),
    col(
      'Selector',
      `A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: ${LABEL_SELECTORS}`,
      'string',
      1,
    ),
  ],
  cells: (o, now) => {
    const d = o as Obj;
    const s = (d.status ?? {}) as Obj;
    const podSpec = podTemplateSpec(d);
    const [containers, images] = containerCells(podSpec);
    return [
      objName(o),
      int(s.desiredNumberScheduled),
      int(s.currentNumberScheduled),
      int(s.numberReady),
      int(s.updatedNumberScheduled),
      int(s.numberAvailable),
      formatLabels(podSpec.nodeSelector),
      objAge(o, now),
      containers,
      images,
      selectorString(d.spec?.selector),
    ];
  },
};

export const statefulSetPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col('Ready', READY_PODS_DESC),
    ageCol(),
    col('Containers', CONTAINERS_DESC, 'string', 1),
    col('Images', IMAGES_DESC, 'string', 1),
  ],
  cells: (o, now) => {
    const s = o as Obj;
    const [containers, images] = containerCells(podTemplateSpec(s));
    return [
      objName(o),
      `${int(s.status?.readyReplicas)}/${s.spec?.replicas ?? 1}`,
      objAge(o, now),
      containers,
      images,
    ];
  },
};

const hasCondition = (o: Obj, type: string) =>
  ((o.status?.conditions ?? []) as Obj[]).some((c) => c.type === type && c.status === 'True');

export const jobPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col('Status', 'Status of the job.'),
    col(
      'Completions',
      'The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.',
    ),
    col('Duration', 'Time required to complete the job.'),
    ageCol(),
    col('Containers', CONTAINERS_DESC, 'string', 1),
    col('Images', IMAGES_DESC, 'string', 1),
    col(
      'Selector',
      `A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: ${LABEL_SELECTORS}`,
      'string',
      1,
    ),
  ],
  cells: (o, now) => {
    const j = o as Obj;
    const succeeded = int(j.status?.succeeded);
    let completions: string;
    if (j.spec?.completions != null) completions = `${succeeded}/${j.spec.completions}`;
    else {
      const parallelism = int(j.spec?.parallelism);
      completions = parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
    }
    let dur = '';
    const start = j.status?.startTime ? Date.parse(j.status.startTime) : Number.NaN;
    if (!Number.isNaN(start)) {
      const end = j.status?.completionTime ? Date.parse(j.status.completionTime) : now.getTime();
      dur = humanDuration(end - start);
    }
    let status = 'Running';
    if (hasCondition(j, 'Complete')) status = 'Complete';
    else if (hasCondition(j, 'Failed')) status = 'Failed';
    else if (meta(o).deletionTimestamp) status = 'Terminating';
    else if (hasCondition(j, 'Suspended')) status = 'Suspended';
    else if (hasCondition(j, 'FailureTarget')) status = 'FailureTarget';
    else if (hasCondition(j, 'SuccessCriteriaMet')) status = 'SuccessCriteriaMet';
    const [containers, images] = containerCells(podTemplateSpec(j));
    return [
      objName(o),
      status,
      completions,
      dur,
      objAge(o, now),
      containers,
      images,
      selectorString(j.spec?.selector),
    ];
  },
};

export const cronJobPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col('Schedule', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
    col(
      'Timezone',
      'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones',
    ),
    col(
      'Suspend',
      'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.',
      'boolean',
    ),
    col('Active', 'A list of pointers to currently running jobs.', 'integer'),
    col('Last Schedule', 'Information when was the last time the job was successfully scheduled.'),
    ageCol(),
    col('Containers', CONTAINERS_DESC, 'string', 1),
    col('Images', IMAGES_DESC, 'string', 1),
    col(
      'Selector',
      `A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: ${LABEL_SELECTORS}`,
      'string',
      1,
    ),
  ],
  cells: (o, now) => {
    const c = o as Obj;
    const jobTemplate = (c.spec?.jobTemplate ?? {}) as Obj;
    const [containers, images] = containerCells(podTemplateSpec(jobTemplate));
    const suspend = c.spec?.suspend;
    return [
      objName(o),
      c.spec?.schedule ?? '',
      c.spec?.timeZone || '<none>',
      suspend == null ? '<unset>' : suspend ? 'True' : 'False',
      (c.status?.active ?? []).length,
      c.status?.lastScheduleTime ? age(c.status.lastScheduleTime, now) : '<none>',
      objAge(o, now),
      containers,
      images,
      selectorString(jobTemplate.spec?.selector),
    ];
  },
};

// ----------------------------------------------------------------------------------------- karmada

export const karmadaClusterPrinter: TablePrinter = {
  columns: [
    nameCol(),
    col('Version', 'KubernetesVersion represents version of the member cluster.'),
    col('Mode', 'SyncMode describes how a cluster sync resources from karmada control plane.'),
    col('Ready', 'The aggregate readiness state of this cluster for accepting workloads.'),
    ageCol(),
    col(
      'Zones',
      'Zones represents the failure zones(also called availability zones) of the member cluster.',
      'string',
      1,
    ),
    col('Region', 'Region represents the region of the member cluster locate in.', 'string', 1),
    col('Provider', 'Provider represents the cloud provider name of the member cluster.', 'string', 1),
    col('API-Endpoint', 'The API endpoint of the member cluster.', 'string', 1),
    col('Proxy-URL', 'ProxyURL is the proxy URL for the cluster.', 'string', 1),
  ],
  cells: (o, now) => {
    const c = o as Obj;
    const ready = ((c.status?.conditions ?? []) as Obj[]).find((x) => x.type === 'Ready');
    return [
      objName(o),
      c.status?.kubernetesVersion ?? '',
      c.spec?.syncMode ?? '',
      ready?.status ?? 'Unknown',
      objAge(o, now),
      ((c.spec?.zones ?? []) as string[]).join(',') || c.spec?.zone || '',
      c.spec?.region ?? '',
      c.spec?.provider ?? '',
      c.spec?.apiEndpoint ?? '',
      c.spec?.proxyURL ?? '',
    ];
  },
};

// ----------------------------------------------------------------------------- default and CRD-style

/** kube-apiserver's default table convertor (rest/table.go): Name and "Created At" (RFC 3339). */
export const defaultPrinter: TablePrinter = {
  columns: [nameCol(), { ...col('Created At', CREATION_TIMESTAMP_DESCRIPTION, 'date') }],
  cells: (o) => {
    const ts = meta(o).creationTimestamp;
    const t = ts ? Date.parse(ts) : Number.NaN;
    return [objName(o), Number.isNaN(t) ? null : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z')];
  },
};

export interface PrinterColumn {
  name: string;
  type: ColumnDefinition['type'];
  jsonPath: string; // a simple dotted path like .spec.size
  description?: string;
  priority?: number;
}

function pathValue(o: unknown, path: string): unknown {
  let cur: any = o;
  for (const seg of path.split('.').filter(Boolean)) {
    if (cur == null || typeof cur !== 'object') return undefined;
    cur = cur[seg];
  }
  return cur;
}

/**
 * The CRD table convertor for additionalPrinterColumns: Name first, then the columns; "date" cells
 * become HumanDuration ages. Without columns a CRD gets a single Age column.
 */
export function crdPrinter(columns: PrinterColumn[]): TablePrinter {
  const cols =
    columns.length > 0
      ? columns
      : [{ name: 'Age', type: 'date' as const, jsonPath: '.metadata.creationTimestamp' }];
  return {
    columns: [
      nameCol(),
      ...cols.map((c) => ({
        name: c.name,
        type: c.type,
        format: '',
        description:
          c.description ??
          (c.jsonPath === '.metadata.creationTimestamp'
            ? CREATION_TIMESTAMP_DESCRIPTION
            : `Custom resource definition column (in JSONPath format): ${c.jsonPath}`),
        priority: c.priority ?? 0,
      })),
    ],
    cells: (o, now) => [
      objName(o),
      ...cols.map((c) => {
        const v = pathValue(o, c.jsonPath);
        if (v == null) return null;
        if (c.type === 'date') return typeof v === 'string' ? age(v, now) : null;
        if (c.type === 'integer') return typeof v === 'number' ? Math.trunc(v) : null;
        if (c.type === 'number') return typeof v === 'number' ? v : null;
        if (c.type === 'boolean') return typeof v === 'boolean' ? v : null;
        return typeof v === 'object' ? JSON.stringify(v) : String(v);
      }),
    ],
  };
}

export const widgetPrinter = crdPrinter([
  { name: 'Size', type: 'integer', jsonPath: '.spec.size', description: 'How many parts the widget has.' },
  { name: 'Color', type: 'string', jsonPath: '.spec.color', description: 'The color of the widget.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
]);

/** Printers by "group/resource" ('' group for core). */
export const PRINTERS: Record<string, TablePrinter> = {
  '/pods': podPrinter,
  '/namespaces': namespacePrinter,
  '/services': servicePrinter,
  '/configmaps': configMapPrinter,
  '/secrets': secretPrinter,
  '/serviceaccounts': serviceAccountPrinter,
  '/events': eventPrinter,
  'events.k8s.io/events': eventPrinter,
  '/nodes': nodePrinter,
  '/endpoints': endpointsPrinter,
  'apps/deployments': deploymentPrinter,
  'apps/replicasets': replicaSetPrinter,
  'apps/daemonsets': daemonSetPrinter,
  'apps/statefulsets': statefulSetPrinter,
  'batch/jobs': jobPrinter,
  'batch/cronjobs': cronJobPrinter,
  'cluster.karmada.io/clusters': karmadaClusterPrinter,
  'example.fleet.io/widgets': widgetPrinter,
};
