/**
 * The references table: every field of a built-in kind that names another object of the same cluster,
 * once, with its JSON path and its protobuf path, and whether answers show it by fleet name. Both
 * directions come from it (references.ts): answers map the shown ones to fleet names; writes map every
 * one back to the plain name, in JSON, YAML and protobuf bodies and JSON patches. A field added here is
 * handled both ways; nothing else lists references.
 *
 * A row is `<JSON path> <protobuf path>…` (compact text: the worker bundle has a size budget).
 * - JSON path: `.`-separated members; `[]` for every element of an array, `[kind=ServiceAccount]` for the
 *   elements whose `kind` is that.
 * - protobuf path: field numbers from the object down to the string field, `.`-separated (k8s.io/api
 *   generated.proto 1.35; inlined Go structs are a message of their own there, so the two paths differ);
 *   `<group>:<path>` when the kind's groups number it differently (`:` alone for core); none when the
 *   protobuf form is not rewritten. Checked against bodies k8s.io/api encodes: test/fixtures/references.
 *
 * Echoes are not references: fields a client fills with the object's OWN name. kubectl's generators (`kubectl
 * run`, `create job`, `create cronjob`) name the container after the object, and a container name must be a
 * DNS-1123 label, so a body written by fleet name has its container called `x.clusterspace.member2`, which
 * the member refuses. On the way in an echo that is exactly the object's fleet name is written as its plain
 * name; any other value is written as it came. Answers leave echoes alone (docs/names.md).
 */

type Obj = Record<string, any>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface Ref {
  json: string;
  /** the JSON path's steps: members, `[]`, `[kind=X]` */
  path: readonly string[];
  /** the protobuf path by group; `*` for every group of the kind */
  pb: Readonly<Record<string, readonly number[]>>;
  /** the cluster fills it in, so answers show it by fleet name; the others are authored */
  shown: boolean;
}

/** the reference-bearing kinds; `looksLike` recognises a list item or a patch (no kind) */
export interface Kind {
  kind: string;
  /** API groups whose protobuf bodies carry this kind ('' for core) */
  groups: readonly string[];
  looksLike(o: Obj): boolean;
  refs: readonly Ref[];
  /** fields that echo the object's own name (a container's name): written plain when they are its fleet name */
  echoes: readonly Ref[];
}

/** `rows` one level down, below the member and field numbers of `at` (a row itself) */
function under(rows: readonly string[], at: string): string[] {
  const [json, pb] = at.split(' ');
  return rows.map((row) => {
    const [j, ...p] = row.split(' ');
    return [`${json}.${j}`, ...p.map((q) => `${pb}.${q}`)].join(' ');
  });
}

/** a Container's references (EnvFromSource's and the key selectors' LocalObjectReference is inlined, 1) */
const CONTAINER = [
  'envFrom[].configMapRef.name 19.2.1.1',
  'envFrom[].secretRef.name 19.3.1.1',
  'env[].valueFrom.configMapKeyRef.name 7.3.3.1.1',
  'env[].valueFrom.secretKeyRef.name 7.3.4.1.1',
];

/** a PodSpec's authored references; Volume inlines VolumeSource (2), EphemeralContainer its Common (1) */
const POD_SPEC = [
  'serviceAccountName 8',
  'serviceAccount 9',
  'imagePullSecrets[].name 15.1',
  'priorityClassName 24',
  'runtimeClassName 29',
  'volumes[].secret.secretName 1.2.6.1',
  'volumes[].configMap.name 1.2.19.1.1',
  'volumes[].persistentVolumeClaim.claimName 1.2.10.1',
  'volumes[].projected.sources[].secret.name 1.2.26.1.1.1.1',
  'volumes[].projected.sources[].configMap.name 1.2.26.1.3.1.1',
  'resourceClaims[].resourceClaimName 39.3',
  'resourceClaims[].resourceClaimTemplateName 39.4',
  ...under(CONTAINER, 'containers[] 2'),
  ...under(CONTAINER, 'initContainers[] 20'),
  ...under(CONTAINER, 'ephemeralContainers[] 34.1'),
];

/** a pod template's spec, at field numbers `pb`: its node is authored there (a Pod's is filled in) */
const template = (pb: string, json = 'spec.template.spec') =>
  under(['nodeName 10', ...POD_SPEC], `${json} ${pb}`);

/** a PodSpec's echo: the containers' names (what kubectl's generators set to the object's name) */
const echo = (pb: string, json = 'spec.template.spec') => under(['containers[].name 2.1'], `${json} ${pb}`);

const looksLikePod = (o: Obj) => isObj(o.spec) && Array.isArray(o.spec.containers);

/**
 * [kind, its groups (comma-separated), looksLike (none: only by kind), shown rows, authored rows, echo
 * rows]. The kinds with shown references come first: a kind-less object is the first kind it looks like,
 * so answers see the same kinds they always did.
 */
type Row = [string, string, ((o: Obj) => boolean) | null, string[], string[], string[]?];

const ROWS: Row[] = [
  // the scheduler binds (spec.nodeName); preemption nominates (status.nominatedNodeName)
  [
    'Pod',
    '',
    looksLikePod,
    ['spec.nodeName 2.10', 'status.nominatedNodeName 3.11'],
    under(POD_SPEC, 'spec 2'),
    echo('2', 'spec'),
  ],
  // the PV binder writes both halves of a bound pair
  [
    'PersistentVolume',
    '',
    (o) => isObj(o.spec?.claimRef),
    ['spec.claimRef.name 2.4.3'],
    ['spec.storageClassName 2.6'],
  ],
  [
    'PersistentVolumeClaim',
    '',
    (o) => typeof o.spec?.volumeName === 'string' && !looksLikePod(o),
    ['spec.volumeName 2.3'],
    ['spec.storageClassName 2.5', 'spec.dataSource.name 2.7.3', 'spec.dataSourceRef.name 2.8.3'],
  ],
  [
    'Endpoints',
    '',
    (o) => Array.isArray(o.subsets),
    [
      'subsets[].addresses[].targetRef.name 2.1.2.3',
      'subsets[].addresses[].nodeName 2.1.4',
      'subsets[].notReadyAddresses[].targetRef.name 2.2.2.3',
      'subsets[].notReadyAddresses[].nodeName 2.2.4',
    ],
    [],
  ],
  [
    'EndpointSlice',
    'discovery.k8s.io',
    (o) => Array.isArray(o.endpoints) && typeof o.addressType === 'string',
    ['endpoints[].targetRef.name 2.4.3', 'endpoints[].nodeName 2.6'],
    [],
  ],
  // the attach/detach controller: which node, which PV
  [
    'VolumeAttachment',
    'storage.k8s.io',
    (o) => typeof o.spec?.attacher === 'string' && isObj(o.spec.source),
    ['spec.nodeName 2.3', 'spec.source.persistentVolumeName 2.2.1'],
    [],
  ],
  // core/v1 (involvedObject) and events.k8s.io/v1 (regarding) Events; both may name a related object
  [
    'Event',
    ',events.k8s.io',
    (o) => isObj(o.involvedObject) || isObj(o.regarding),
    ['involvedObject.name :2.3', 'regarding.name events.k8s.io:8.3', 'related.name :13.3 events.k8s.io:9.3'],
    [],
  ],
  // a Binding names the node a pod is bound to (written, never read)
  ['Binding', '', null, ['target.name 2.3'], []],
  // authored references only: what a chart names after its own objects
  [
    'StatefulSet',
    'apps',
    (o) => typeof o.spec?.serviceName === 'string' || Array.isArray(o.spec?.volumeClaimTemplates),
    [],
    [
      'spec.serviceName 2.5',
      'spec.volumeClaimTemplates[].spec.storageClassName 2.4.2.5',
      ...template('2.3.2'),
    ],
    echo('2.3.2'),
  ],
  // Deployment's template fields are every workload's: kind-less, they all look like one
  ['Deployment', 'apps', (o) => isObj(o.spec?.template?.spec), [], template('2.3.2'), echo('2.3.2')],
  ['ReplicaSet', 'apps', null, [], template('2.3.2'), echo('2.3.2')],
  ['DaemonSet', 'apps', null, [], template('2.2.2'), echo('2.2.2')],
  ['ReplicationController', '', null, [], template('2.3.2'), echo('2.3.2')],
  ['Job', 'batch', null, [], template('2.6.2'), echo('2.6.2')],
  [
    'CronJob',
    'batch',
    (o) => isObj(o.spec?.jobTemplate),
    [],
    template('2.5.2.6.2', 'spec.jobTemplate.spec.template.spec'),
    echo('2.5.2.6.2', 'spec.jobTemplate.spec.template.spec'),
  ],
  [
    'PodTemplate',
    '',
    (o) => isObj(o.template?.spec),
    [],
    template('2.2', 'template.spec'),
    echo('2.2', 'template.spec'),
  ],
  [
    'ServiceAccount',
    '',
    (o) => Array.isArray(o.secrets) || Array.isArray(o.imagePullSecrets),
    [],
    ['secrets[].name 2.3', 'imagePullSecrets[].name 3.1'],
  ],
  // a User's or Group's name is not an object's: only ServiceAccount subjects (JSON only); their
  // namespace too (a chart installed with -n <ns>.clusterspace.<cluster> writes it there)
  ...['RoleBinding', 'ClusterRoleBinding'].map(
    (kind): Row => [
      kind,
      'rbac.authorization.k8s.io',
      (o) => isObj(o.roleRef) || Array.isArray(o.subjects),
      [],
      ['roleRef.name 3.3', 'subjects[kind=ServiceAccount].name', 'subjects[kind=ServiceAccount].namespace'],
    ],
  ),
  [
    'HorizontalPodAutoscaler',
    'autoscaling',
    (o) => isObj(o.spec?.scaleTargetRef),
    [],
    ['spec.scaleTargetRef.name 2.1.2'],
  ],
  // IngressBackend: service 4 (its name 1); IngressRule inlines IngressRuleValue (2), whose http is 1
  [
    'Ingress',
    'networking.k8s.io',
    (o) => Array.isArray(o.spec?.rules) || isObj(o.spec?.defaultBackend) || Array.isArray(o.spec?.tls),
    [],
    [
      'spec.ingressClassName 2.4',
      'spec.defaultBackend.service.name 2.1.4.1',
      'spec.rules[].http.paths[].backend.service.name 2.3.2.1.1.2.4.1',
      'spec.tls[].secretName 2.2.2',
    ],
  ],
];

function ref(row: string, shown: boolean): Ref {
  const [json, ...pbs] = row.split(' ');
  const pb: Record<string, number[]> = {};
  for (const t of pbs) {
    const at = t.indexOf(':');
    pb[at < 0 ? '*' : t.slice(0, at)] = t
      .slice(at + 1)
      .split('.')
      .map(Number);
  }
  return { json: json!, path: json!.split(/\.|(?=\[)/), pb, shown };
}

export const KINDS: readonly Kind[] = ROWS.map(([kind, groups, looksLike, shown, authored, echoes = []]) => ({
  kind,
  groups: groups.split(','),
  looksLike: looksLike ?? (() => false),
  refs: [...shown.map((r) => ref(r, true)), ...authored.map((r) => ref(r, false))],
  echoes: echoes.map((r) => ref(r, false)),
}));
