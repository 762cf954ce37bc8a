/**
 * References: the fields of an object that name ANOTHER object of the same cluster, and the one rule the
 * fleet applies to them.
 *
 * The rule. A reference the cluster fills in itself (the scheduler's `spec.nodeName`, the PV binder's
 * `claimRef`/`volumeName`, the endpoints controllers' `targetRef`/`nodeName`, the event recorder's
 * `involvedObject`/`regarding`/`related`, the garbage collector's ownerReferences) is shown as the fleet
 * name of the object it names, `<name>.clusterspace.<cluster>` (plain for the control plane when
 * federation is on; shortened past 253 characters like every fleet name, names.ts), so that following it at
 * the root URL reaches that cluster's object. On the way in
 * (create/update bodies) the same fields lose the suffix of the owning cluster; another cluster's suffix
 * is a 400 (an object cannot refer across clusters). Field selectors on such fields are translated the
 * same way (fieldnames.ts), and so are the Table cells that print them (table.ts).
 *
 * What stays plain, and why: references a user AUTHORS in a spec (a pod's volumes' configMap, secret and
 * persistentVolumeClaim.claimName, serviceAccountName, imagePullSecrets, env/envFrom sources; a
 * workload's template) and class names (storageClassName, priorityClassName, runtimeClassName,
 * ingressClassName). They are resolved by the cluster inside the object's own namespace or among
 * classes every member defines alike, never by a client at the root; they are what Karmada propagates
 * unchanged to every member; and rewriting them would make the object read back differ from the manifest
 * applied (kubectl apply's three-way diff would see a change on every apply). `metadata.namespace` and
 * `involvedObject.namespace` stay plain too: namespaces are shown by their plain name in every object.
 *
 * Objects are recognised by `kind` when they carry it (single objects, watch events, Table rows with
 * includeObject=Object); list items carry no kind, so then by the fields only that kind has.
 */

type Obj = Record<string, any>;

/** What to do with one reference: the name in, the name to store out. `field` names it for errors. */
export type NameMap = (name: string, field: string) => string;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function mapString(holder: unknown, key: string, field: string, f: NameMap): void {
  if (isObj(holder) && typeof holder[key] === 'string' && holder[key] !== '')
    holder[key] = f(holder[key], field);
}

/** an ObjectReference: only its name (namespace, kind, uid stay) */
function mapRef(holder: unknown, key: string, field: string, f: NameMap): void {
  if (isObj(holder)) mapString(holder[key], 'name', `${field}.name`, f);
}

function eachOf(list: unknown, fn: (item: unknown, i: number) => void): void {
  if (Array.isArray(list)) list.forEach(fn);
}

/** the reference-bearing kinds, by kind; `looksLike` recognises a list item (no kind) */
interface Kind {
  kind: string;
  looksLike(o: Obj): boolean;
  map(o: Obj, f: NameMap): void;
}

const KINDS: readonly Kind[] = [
  {
    // the scheduler binds (spec.nodeName); preemption nominates (status.nominatedNodeName)
    kind: 'Pod',
    looksLike: (o) => isObj(o.spec) && Array.isArray(o.spec.containers),
    map(o, f) {
      mapString(o.spec, 'nodeName', 'spec.nodeName', f);
      mapString(o.status, 'nominatedNodeName', 'status.nominatedNodeName', f);
    },
  },
  {
    // the PV binder writes both halves of a bound pair
    kind: 'PersistentVolume',
    looksLike: (o) => isObj(o.spec) && isObj(o.spec.claimRef),
    map: (o, f) => mapRef(o.spec, 'claimRef', 'spec.claimRef', f),
  },
  {
    kind: 'PersistentVolumeClaim',
    looksLike: (o) =>
      isObj(o.spec) && typeof o.spec.volumeName === 'string' && !Array.isArray(o.spec.containers),
    map: (o, f) => mapString(o.spec, 'volumeName', 'spec.volumeName', f),
  },
  {
    kind: 'Endpoints',
    looksLike: (o) => Array.isArray(o.subsets),
    map(o, f) {
      eachOf(o.subsets, (s, i) => {
        for (const key of ['addresses', 'notReadyAddresses'] as const) {
          if (!isObj(s)) return;
          eachOf(s[key], (a, j) => {
            const at = `subsets[${i}].${key}[${j}]`;
            mapRef(a, 'targetRef', `${at}.targetRef`, f);
            mapString(a, 'nodeName', `${at}.nodeName`, f);
          });
        }
      });
    },
  },
  {
    kind: 'EndpointSlice',
    looksLike: (o) => Array.isArray(o.endpoints) && typeof o.addressType === 'string',
    map(o, f) {
      eachOf(o.endpoints, (e, i) => {
        mapRef(e, 'targetRef', `endpoints[${i}].targetRef`, f);
        mapString(e, 'nodeName', `endpoints[${i}].nodeName`, f);
      });
    },
  },
  {
    // the attach/detach controller: which node, which PV
    kind: 'VolumeAttachment',
    looksLike: (o) => isObj(o.spec) && typeof o.spec.attacher === 'string' && isObj(o.spec.source),
    map(o, f) {
      mapString(o.spec, 'nodeName', 'spec.nodeName', f);
      mapString(o.spec?.source, 'persistentVolumeName', 'spec.source.persistentVolumeName', f);
    },
  },
  {
    // core/v1 (involvedObject) and events.k8s.io/v1 (regarding) Events; both may name a related object
    kind: 'Event',
    looksLike: (o) => isObj(o.involvedObject) || isObj(o.regarding),
    map(o, f) {
      mapRef(o, 'involvedObject', 'involvedObject', f);
      mapRef(o, 'regarding', 'regarding', f);
      mapRef(o, 'related', 'related', f);
    },
  },
  {
    // a Binding names the node a pod is bound to (written, never read)
    kind: 'Binding',
    looksLike: () => false,
    map: (o, f) => mapRef(o, 'target', 'target', f),
  },
];

const BY_KIND = new Map(KINDS.map((k) => [k.kind, k]));

/**
 * Applies `f` to every reference of `obj` (not ownerReferences: those are metadata, handled with it),
 * in place. An object of a kind without references is left alone.
 */
export function mapReferences(obj: Obj, f: NameMap): void {
  if (!isObj(obj)) return;
  if (typeof obj.kind === 'string' && obj.kind !== '') {
    BY_KIND.get(obj.kind)?.map(obj, f);
    return;
  }
  for (const k of KINDS) {
    if (k.looksLike(obj)) {
      k.map(obj, f);
      return;
    }
  }
}

/**
 * Field selectors whose values are names of objects of the queried object's cluster (the apiserver's
 * selectable fields for pods and events, events.k8s.io's `regarding.name` included): a fleet name pins
 * its cluster and is sent plainly.
 */
export const REFERENCE_FIELDS: ReadonlySet<string> = new Set([
  'spec.nodeName',
  'status.nominatedNodeName',
  'involvedObject.name',
  'regarding.name',
  'related.name',
]);

/** Kinds whose objects carry references (mapReferences changes them): their texts are parsed. */
export const REFERENCE_KINDS: ReadonlySet<string> = new Set(KINDS.map((k) => k.kind));

/**
 * Top-level members of a kind-less object that make mapReferences look inside it (Events, Endpoints,
 * EndpointSlices): the byte-level rewriting (jsonsplit-facts.ts) gives such objects to the parsing path.
 */
export const REFERRING_MEMBERS: ReadonlySet<string> = new Set([
  'involvedObject',
  'regarding',
  'related',
  'subsets',
  'endpoints',
]);

/** Members of `spec` that name other objects in kinds rarer than pods (PV, PVC, VolumeAttachment): parsed. */
export const REFERRING_SPEC_MEMBERS: ReadonlySet<string> = new Set(['claimRef', 'volumeName', 'attacher']);

/**
 * The same references in protobuf bodies (what client-go sends for built-in kinds), by the envelope's
 * `<group>/<kind>` (group "" for core): each a path of field numbers from the object to a string field
 * (k8s.io/api generated.proto, 1.35; repeated messages are walked element by element). ObjectReference's
 * name is field 3.
 */
export const PROTOBUF_REFERENCES: ReadonlyMap<
  string,
  ReadonlyArray<{ path: number[]; field: string }>
> = new Map([
  [
    '/Pod',
    [
      { path: [2, 10], field: 'spec.nodeName' },
      { path: [3, 11], field: 'status.nominatedNodeName' },
    ],
  ],
  ['/Binding', [{ path: [2, 3], field: 'target.name' }]],
  ['/PersistentVolume', [{ path: [2, 4, 3], field: 'spec.claimRef.name' }]],
  ['/PersistentVolumeClaim', [{ path: [2, 3], field: 'spec.volumeName' }]],
  [
    '/Endpoints',
    [
      { path: [2, 1, 2, 3], field: 'subsets.addresses.targetRef.name' },
      { path: [2, 1, 4], field: 'subsets.addresses.nodeName' },
      { path: [2, 2, 2, 3], field: 'subsets.notReadyAddresses.targetRef.name' },
      { path: [2, 2, 4], field: 'subsets.notReadyAddresses.nodeName' },
    ],
  ],
  [
    'discovery.k8s.io/EndpointSlice',
    [
      { path: [2, 4, 3], field: 'endpoints.targetRef.name' },
      { path: [2, 6], field: 'endpoints.nodeName' },
    ],
  ],
  [
    'storage.k8s.io/VolumeAttachment',
    [
      { path: [2, 3], field: 'spec.nodeName' },
      { path: [2, 2, 1], field: 'spec.source.persistentVolumeName' },
    ],
  ],
  [
    '/Event',
    [
      { path: [2, 3], field: 'involvedObject.name' },
      { path: [13, 3], field: 'related.name' },
    ],
  ],
  [
    'events.k8s.io/Event',
    [
      { path: [8, 3], field: 'regarding.name' },
      { path: [9, 3], field: 'related.name' },
    ],
  ],
]);

// ---------------------------------------------------------------------------------------------------
// the same rule on texts, for the byte-level paths of objects.ts
