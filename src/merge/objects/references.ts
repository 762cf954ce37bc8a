/**
 * References: the fields of an object that name ANOTHER object of the same cluster, and the one rule the
 * fleet applies to them.
 *
 * The rule. A reference the cluster fills in itself (the scheduler's `spec.nodeName`, the PV binder's
 * `claimRef`/`volumeName`, the endpoints controllers' `targetRef`/`nodeName`, the event recorder's
 * `involvedObject`/`regarding`/`related`, the garbage collector's ownerReferences) is shown as the fleet
 * name of the object it names, `<name>.clusterspace.<cluster>` (plain for the control plane when
 * federation is on; shortened past 253 characters like every fleet name, names.ts), so that following it at
 * the root URL reaches that cluster's object. Field selectors on such fields are translated the same way
 * (fieldnames.ts), and so are the Table cells that print them (table.ts).
 *
 * What answers leave plain, and why: references a user AUTHORS in a spec (a pod's volumes' configMap,
 * secret and persistentVolumeClaim.claimName, serviceAccountName, imagePullSecrets, env/envFrom sources;
 * a workload's template; a StatefulSet's serviceName, a RoleBinding's roleRef, an HPA's target, an
 * Ingress's backends) and class names (storageClassName, priorityClassName, runtimeClassName,
 * ingressClassName). They are resolved by the cluster inside the object's own namespace or among
 * classes every member defines alike, never by a client at the root; they are what Karmada propagates
 * unchanged to every member; and rewriting them would make the object read back differ from the manifest
 * applied (kubectl apply's three-way diff would see a change on every apply). `metadata.namespace` and
 * `involvedObject.namespace` stay plain too: namespaces are shown by their plain name in every object.
 *
 * On the way in (create, update, apply and patch bodies; JSON, YAML, protobuf) EVERY reference of the
 * table, shown or authored, loses the suffix of the owning cluster, and another cluster's suffix is a 400
 * naming the field (an object cannot refer across clusters): a chart that names all its objects
 * `x.clusterspace.member2` (Helm's fullnameOverride) gets pods whose serviceAccountName is the `x` it
 * created. A plain reference is written as it came.
 *
 * The fields themselves are one table (references-table.ts) read in both directions.
 * Objects are recognised by `kind` when they carry it (single objects, watch events, Table rows with
 * includeObject=Object); list items carry no kind, so then by the fields only that kind has.
 */

import { isObj, KINDS, type Kind } from './references-table.ts';

type Obj = Record<string, any>;

/** What to do with one reference: the name in, the name to store out. `field` names it for errors. */
export type NameMap = (name: string, field: string) => string;

// --- walking a JSON path ------------------------------------------------------------------------------

/**
 * applies `f` to the non-empty string at `path` (Ref.path: members, `[]` for every element of an array,
 * `[kind=X]` for the elements whose kind is X) below `holder`, from step `i`, in place
 */
function walk(holder: unknown, path: readonly string[], i: number, at: string, f: NameMap): void {
  const step = path[i]!;
  if (step[0] !== '[') {
    if (!isObj(holder)) return;
    const field = at === '' ? step : `${at}.${step}`;
    if (i === path.length - 1) {
      const v = holder[step];
      if (typeof v === 'string' && v !== '') holder[step] = f(v, field);
    } else walk(holder[step], path, i + 1, field, f);
    return;
  }
  if (!Array.isArray(holder)) return;
  const only = step.slice(6, -1); // `[kind=X]`: X; `[]`: ''
  holder.forEach((el, j) => {
    if (only === '' || (isObj(el) && el.kind === only)) walk(el, path, i + 1, `${at}[${j}]`, f);
  });
}

/** each kind's references that answers show; the kinds that have some, in the table's order */
const SHOWN = new Map(KINDS.map((k) => [k, k.refs.filter((r) => r.shown)]));
const SHOWING = KINDS.filter((k) => SHOWN.get(k)!.length > 0);
const BY_KIND = new Map(KINDS.map((k) => [k.kind, k]));

/** the kind of `obj`: by its `kind`, else the first of `kinds` it looks like */
function kindOf(obj: Obj, kinds: readonly Kind[]): Kind | undefined {
  if (typeof obj.kind === 'string' && obj.kind !== '') return BY_KIND.get(obj.kind);
  return kinds.find((k) => k.looksLike(obj));
}

/**
 * Applies `f` to every reference of `obj` that answers show by fleet name (not ownerReferences: those
 * are metadata, handled with it), in place. An object of a kind without such references is left alone.
 */
export function mapReferences(obj: Obj, f: NameMap): void {
  if (!isObj(obj)) return;
  const k = kindOf(obj, SHOWING);
  if (k) for (const r of SHOWN.get(k)!) walk(obj, r.path, 0, '', f);
}

/**
 * The way in: applies `f` to EVERY reference of `obj` (shown and authored alike), in place: a body
 * written by fleet names (a chart with `fullnameOverride: x.clusterspace.member2`) names the objects it
 * refers to as their cluster knows them.
 */
export function mapWrittenReferences(obj: Obj, f: NameMap): void {
  if (!isObj(obj)) return;
  for (const r of kindOf(obj, KINDS)?.refs ?? []) walk(obj, r.path, 0, '', f);
}

/**
 * The way in, for echoes (references-table.ts): applies `f` to every field of `obj` that may echo the
 * object's own name (its containers' names), in place; `f` decides (the caller knows the object's name).
 */
export function mapEchoes(obj: Obj, f: NameMap): void {
  if (!isObj(obj)) return;
  for (const r of kindOf(obj, KINDS)?.echoes ?? []) walk(obj, r.path, 0, '', f);
}

/** every reference's JSON path once, whatever the kind (JSON patches name no kind) */
const ALL_PATHS: readonly (readonly string[])[] = [
  ...new Map(KINDS.flatMap((k) => k.refs.map((r) => [r.json, r.path]))).values(),
];

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * A JSON patch value written at `pointer` (RFC 6901), with `f` applied to the references it holds or
 * is, whatever the kind: `/spec/serviceAccountName`, `/spec/volumes/0`, `/spec/template` alike. The value
 * is set in an object shaped by the pointer and every reference's path walked there, so a
 * `[kind=…]` step is checked on the value when the pointer ends at the element (`/subjects/-`) and
 * cannot match when it passes by index (`/subjects/0/name`: no kind to check).
 */
export function mapReferencesAt(pointer: string, value: unknown, f: NameMap): unknown {
  if (pointer === '') return value;
  const keys = pointer.slice(1).split('/').map(unescapePointer);
  const root: Obj = {};
  let at: Obj = root;
  keys.forEach((k, i) => {
    // an index makes an array (sparse: the error names the index given); `-` appends, as at 0
    const next = i === keys.length - 1 ? value : /^(\d+|-)$/.test(keys[i + 1]!) ? [] : {};
    at[k === '-' ? '0' : k] = next;
    at = next as Obj;
  });
  for (const path of ALL_PATHS) walk(root, path, 0, '', f);
  let out: any = root;
  for (const k of keys) out = out[k === '-' ? '0' : k];
  return out;
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

/** Kinds whose objects carry references answers show by fleet name (mapReferences changes them): parsed. */
export const REFERENCE_KINDS: ReadonlySet<string> = new Set(SHOWING.map((k) => k.kind));

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

/** one field of the table in a protobuf body: field numbers down to a string; `echo` for an echo */
export interface ProtobufRef {
  path: readonly number[];
  field: string;
  echo: boolean;
}

/**
 * The references of the table in protobuf bodies (what client-go sends for built-in kinds), by the
 * envelope's `<group>/<kind>` (group "" for core): each a path of field numbers from the object to a
 * string field (repeated messages are walked element by element). Writes only: all of them, and the
 * echoes (marked).
 */
export const PROTOBUF_REFERENCES: ReadonlyMap<string, readonly ProtobufRef[]> = (() => {
  const m = new Map<string, ProtobufRef[]>();
  for (const k of KINDS)
    for (const g of k.groups)
      for (const [refs, echo] of [
        [k.refs, false],
        [k.echoes, true],
      ] as const)
        for (const r of refs) {
          const path = r.pb[g] ?? r.pb['*'];
          if (!path) continue;
          const key = `${g}/${k.kind}`;
          if (!m.has(key)) m.set(key, []);
          m.get(key)!.push({ path, field: r.json.replace(/\[[^\]]*\]/g, ''), echo });
        }
  return m;
})();

// ---------------------------------------------------------------------------------------------------
// the same rule on texts, for the byte-level paths of objects.ts
