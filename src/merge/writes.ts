/**
 * Request bodies of writes, from the fleet view to one cluster's view. Pure and in place (the caller owns
 * the parsed body); every refusal is a Status the route answers as is, and then nothing is written.
 *
 * What changes on the way in:
 * - names: `metadata.name` / `generateName` lose their `.clusterspace.<cluster>` suffix (a suffix naming
 *   another cluster is refused); on update and patch the body's name must be the URL's (fleet or plain
 *   spelling of it), like kube-apiserver's checkName; ownerReferences and the references of references.ts
 *   (`spec.nodeName`, `claimRef`, a Binding's target…, and the authored ones: `serviceAccountName`,
 *   volumes, env sources, workload templates…) lose it too, in JSON and protobuf bodies alike; merge
 *   patches by the same fields (recognised as references.ts recognises kind-less objects), JSON patches
 *   at the paths that write them or values holding them (`/spec/nodeName`, `/spec/template`…);
 * - echoes of the object's own name: a container named exactly the object's fleet name (what `kubectl run`,
 *   `create job` and `create cronjob` send by fleet name) gets the plain name, in whole objects (JSON,
 *   YAML, protobuf, the last-applied record); patches are left as they came;
 * - markers: the annotation and the label `fleet.karmada.io/cluster` are never written to a cluster. In
 *   objects they are removed; in merge and strategic merge patches their keys are removed (setting or
 *   deleting them is a no-op); JSON patch operations whose `path` or `from` points at a marker are DROPPED
 *   (the marker is where the object lives, not data: adding, replacing, removing or testing it means
 *   nothing to the cluster), and values written at `/metadata`, `/metadata/labels` or
 *   `/metadata/annotations` lose the marker keys; the cluster term a pod selector is shown with at the
 *   root (podselector.ts) is removed the same ways from `spec.selector` (objects, merge patches, JSON
 *   patch operations and values, protobuf bodies);
 * - resourceVersions: a composite RV (object, patch, JSON patch value, delete preconditions) becomes the
 *   owning cluster's own, so optimistic concurrency keeps working (a stale one gets the cluster's 409);
 *   one that does not decode for this fleet is a 400;
 * - `kubectl.kubernetes.io/last-applied-configuration` is an object too: its name, namespace and markers
 *   are rewritten the same way, so client-side apply's three-way merge stays consistent in every cluster
 *   (reads show it back as the object is shown: lastapplied.ts).
 */

import { nestsDeeperThan, tooDeepMessage } from '../kube/json.ts';
import { ProtobufError } from '../kube/protobuf.ts';
import { CLUSTER_LABEL } from '../kube/selectors.ts';
import { badRequest, type Status } from '../kube/status.ts';
import { decodeName, unresolvedMessage } from './names/index.ts';
import { stripMarkers } from './objects/index.ts';
import { LAST_APPLIED } from './objects/lastapplied.ts';
import { stripPodSelector } from './objects/podselector.ts';
import { mapEchoes, mapReferencesAt, mapWrittenReferences } from './objects/references.ts';
import { editProtobufObjectMeta } from './protobuf.ts';
import { type Membership, ownResourceVersion } from './rv/index.ts';

export { LAST_APPLIED } from './objects/lastapplied.ts';
/** kube-apiserver's limit on request bodies (DefaultMaxRequestSizeBytes, 3 MiB) */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

export interface WriteContext {
  /** the owning cluster */
  cluster: string;
  /** the fleet's membership (to decode composite RVs) */
  membership: readonly string[] | Membership;
  /** update / patch: the object's name in the URL, as the client wrote it and as the cluster knows it */
  url?: { fleet: string; plain: string };
}

export type Rewritten<T> = { ok: true; value: T } | { ok: false; status: Status };

type Obj = Record<string, any>;

class Refusal extends Error {
  constructor(readonly status: Status) {
    super(status.message);
  }
}

/**
 * Runs a rewrite of `input`, turning a Refusal into its Status. Every JSON body goes through here before
 * anything re-serialises it: one nested past MAX_BODY_DEPTH (src/kube/json.ts) is a 400 here, not a stack overflow
 * (500) in JSON.stringify later.
 */
function run<T>(input: unknown, f: () => T): Rewritten<T> {
  if (nestsDeeperThan(input)) return { ok: false, status: badRequest(tooDeepMessage()) };
  try {
    return { ok: true, value: f() };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, status: e.status };
    throw e;
  }
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A name from a body as the cluster knows it: the suffix of this cluster goes, another cluster's is refused. */
export function plainName(name: string, cluster: string, field = 'metadata.name'): string {
  const d = decodeName(name);
  // a shortened name (names.ts) of an object not known here: writing it would store that name itself
  if (d.unresolved) throw new Refusal(badRequest(unresolvedMessage(field, name, d.cluster)));
  if (d.cluster === undefined || d.cluster === cluster) return d.name;
  throw new Refusal(
    badRequest(
      `${field}: the name "${name}" names cluster "${d.cluster}", but the object is written to cluster "${cluster}"`,
    ),
  );
}

function ownRV(rv: unknown, ctx: WriteContext): unknown {
  if (typeof rv !== 'string' || rv === '') return rv;
  const own = ownResourceVersion(rv, ctx.membership, ctx.cluster);
  if (!own.ok) throw new Refusal(own.status);
  return own.resourceVersion;
}

function checkUrlName(name: string, ctx: WriteContext): string {
  const plain = plainName(name, ctx.cluster);
  if (ctx.url && plain !== ctx.url.plain)
    throw new Refusal(
      badRequest(`the name of the object (${name}) does not match the name on the URL (${ctx.url.fleet})`),
    );
  return plain;
}

function renameOwnerRefs(refs: unknown, ctx: WriteContext): void {
  if (!Array.isArray(refs)) return;
  refs.forEach((r, i) => {
    if (isObj(r) && typeof r.name === 'string' && r.name !== '')
      r.name = plainName(r.name, ctx.cluster, `metadata.ownerReferences[${i}].name`);
  });
}

/** every reference of references.ts, authored ones too, as the owning cluster knows it (or a refusal) */
function plainReferences(obj: Obj, ctx: WriteContext): void {
  mapWrittenReferences(obj, (name, field) => plainName(name, ctx.cluster, field));
}

/**
 * An echo of the object's own name (a container's, references-table.ts) as the cluster knows it: exactly
 * the object's fleet name in this cluster (`kubectl run x.clusterspace.member2`) becomes its plain name;
 * any other value is written as it came (the cluster validates it).
 */
function plainEcho(v: string, objectName: string | undefined, ctx: WriteContext): string {
  if (!objectName || v !== objectName) return v;
  const d = decodeName(v);
  return d.cluster === ctx.cluster && !d.unresolved ? d.name : v;
}

/** the echoes of `obj`, compared with its name as written (the body's, else the URL's); before the rename */
function plainEchoes(obj: Obj, ctx: WriteContext): void {
  const md = obj.metadata;
  const own = isObj(md) && typeof md.name === 'string' && md.name !== '' ? md.name : ctx.url?.fleet;
  mapEchoes(obj, (v) => plainEcho(v, own, ctx));
}

function dropMarkerKeys(m: unknown): void {
  if (isObj(m)) delete m[CLUSTER_LABEL];
}

/** last-applied-configuration is a JSON object in a string: rewrite it like the object itself. */
function rewriteLastApplied(annotations: unknown, ctx: WriteContext): void {
  if (!isObj(annotations) || typeof annotations[LAST_APPLIED] !== 'string') return;
  const text: string = annotations[LAST_APPLIED];
  let inner: unknown;
  try {
    inner = JSON.parse(text);
  } catch {
    return; // not JSON: an opaque string, kept as written
  }
  // the annotation is re-serialised below: past the body limit it is refused like the body itself
  if (nestsDeeperThan(inner)) throw new Refusal(badRequest(tooDeepMessage()));
  if (!isObj(inner)) return;
  plainEchoes(inner, ctx);
  const md = inner.metadata;
  if (isObj(md)) {
    if (typeof md.name === 'string' && md.name !== '') md.name = plainName(md.name, ctx.cluster);
    // `-n shop.clusterspace.member2`: kubectl records the namespace as it was given (shown back on reads)
    if (typeof md.namespace === 'string' && md.namespace !== '')
      md.namespace = plainName(md.namespace, ctx.cluster, 'metadata.namespace');
    if (typeof md.resourceVersion === 'string') delete md.resourceVersion;
  }
  plainReferences(inner, ctx);
  stripMarkers(inner);
  annotations[LAST_APPLIED] = JSON.stringify(inner) + (text.endsWith('\n') ? '\n' : '');
}

function rewriteMetadata(md: Obj, ctx: WriteContext, checkName: boolean): void {
  if (typeof md.name === 'string' && md.name !== '')
    md.name = checkName ? checkUrlName(md.name, ctx) : plainName(md.name, ctx.cluster);
  if (typeof md.generateName === 'string' && md.generateName !== '')
    md.generateName = plainName(md.generateName, ctx.cluster, 'metadata.generateName');
  if ('resourceVersion' in md) md.resourceVersion = ownRV(md.resourceVersion, ctx);
  renameOwnerRefs(md.ownerReferences, ctx);
  rewriteLastApplied(md.annotations, ctx);
}

/**
 * A whole object (create, update, a subresource's body such as Scale, Eviction, Binding): names, markers,
 * composite RV. `ctx.url` set: the body's name must be the URL's (it may also be left out).
 */
export function objectForCluster(obj: Obj, ctx: WriteContext): Rewritten<Obj> {
  return run(obj, () => {
    if (!isObj(obj)) return obj;
    plainEchoes(obj, ctx);
    if (isObj(obj.metadata)) {
      rewriteMetadata(obj.metadata, ctx, ctx.url !== undefined);
      stripMarkers(obj);
    }
    // nodes, volumes, claims, events' objects (a Binding's target too): names of the same cluster
    plainReferences(obj, ctx);
    // an Eviction carries DeleteOptions
    if (isObj(obj.deleteOptions)) deleteOptionsInPlace(obj.deleteOptions, ctx);
    return obj;
  });
}

/** Merge patch and strategic merge patch: the same walk over the patch's metadata; markers are removed. */
export function mergePatchForCluster(patch: unknown, ctx: WriteContext): Rewritten<unknown> {
  return run(patch, () => {
    if (!isObj(patch)) return patch;
    // a patch carries no kind: references are recognised by their fields (a pod's node only with its
    // containers, which a patch rarely repeats; a node is set at create or by a Binding anyway)
    plainReferences(patch, ctx);
    stripPodSelector(patch);
    if (!isObj(patch.metadata)) return patch;
    const md = patch.metadata;
    // null deletes a field in a merge patch: deleting the name (or a marker) means nothing
    if (typeof md.name === 'string' && md.name !== '') md.name = checkUrlName(md.name, ctx);
    if ('resourceVersion' in md) md.resourceVersion = ownRV(md.resourceVersion, ctx);
    renameOwnerRefs(md.ownerReferences, ctx);
    rewriteLastApplied(md.annotations, ctx);
    for (const key of ['labels', 'annotations'] as const) {
      const m = md[key];
      if (!isObj(m) || !(CLUSTER_LABEL in m)) continue;
      delete m[CLUSTER_LABEL];
      if (Object.keys(m).length === 0) delete md[key];
    }
    if (Object.keys(md).length === 0) delete patch.metadata;
    return patch;
  });
}

const MARKER_POINTER = CLUSTER_LABEL.replace(/~/g, '~0').replace(/\//g, '~1');
const MARKER_PATHS = new Set([
  `/metadata/labels/${MARKER_POINTER}`,
  `/metadata/annotations/${MARKER_POINTER}`,
  // the term a pod selector is shown with at the root (podselector.ts)
  `/spec/selector/${MARKER_POINTER}`,
  `/spec/selector/matchLabels/${MARKER_POINTER}`,
]);

export interface JsonPatchOp {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/**
 * JSON patch (RFC 6902). Operations on a marker are dropped; the others have their values rewritten
 * where they write names, markers or resourceVersions. A body that is not an array of operations is a 400.
 */
export function jsonPatchForCluster(ops: unknown, ctx: WriteContext): Rewritten<JsonPatchOp[]> {
  return run(ops, () => {
    if (!Array.isArray(ops))
      throw new Refusal(
        badRequest('json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp'),
      );
    const out: JsonPatchOp[] = [];
    for (const [i, raw] of ops.entries()) {
      if (!isObj(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string')
        throw new Refusal(
          badRequest(`the JSON patch operation at index ${i} needs an "op" and a "path" (RFC 6902)`),
        );
      const op = raw as JsonPatchOp;
      if (MARKER_PATHS.has(op.path) || (typeof op.from === 'string' && MARKER_PATHS.has(op.from))) continue;
      if ('value' in op && op.op !== 'remove') op.value = rewriteValueAt(op.path, op.value, ctx);
      out.push(op);
    }
    return out;
  });
}

function rewriteValueAt(path: string, value: unknown, ctx: WriteContext): unknown {
  switch (path) {
    case '':
      if (isObj(value)) {
        const r = objectForCluster(value, ctx);
        if (!r.ok) throw new Refusal(r.status);
      }
      return value;
    case '/metadata':
      if (isObj(value)) {
        rewriteMetadata(value, ctx, true);
        stripMarkers({ metadata: value });
      }
      return value;
    case '/metadata/name':
      return typeof value === 'string' ? checkUrlName(value, ctx) : value;
    case '/metadata/generateName':
      return typeof value === 'string' ? plainName(value, ctx.cluster, 'metadata.generateName') : value;
    case '/metadata/resourceVersion':
      return ownRV(value, ctx);
    case '/metadata/labels':
      dropMarkerKeys(value);
      return value;
    case '/metadata/annotations':
      dropMarkerKeys(value);
      rewriteLastApplied(value, ctx);
      return value;
    case `/metadata/annotations/${LAST_APPLIED.replace(/\//g, '~1')}`: {
      const holder = { [LAST_APPLIED]: value };
      rewriteLastApplied(holder, ctx);
      return holder[LAST_APPLIED];
    }
    case '/metadata/ownerReferences':
      renameOwnerRefs(value, ctx);
      return value;
    case '/spec/selector':
      stripPodSelector({ spec: { selector: value } });
      return value;
    case '/spec/selector/matchLabels':
      dropMarkerKeys(value);
      return value;
    case '/spec':
      stripPodSelector({ spec: value });
      break; // and the references below it
  }
  // a reference, or a value holding references (`/spec/template`, `/spec/volumes/0`…): references.ts
  value = mapReferencesAt(path, value, (name, field) => plainName(name, ctx.cluster, field));
  if (/^\/metadata\/ownerReferences\/(\d+|-)$/.test(path)) {
    renameOwnerRefs([value], ctx);
    return value;
  }
  if (/^\/metadata\/ownerReferences\/\d+\/name$/.test(path) && typeof value === 'string')
    return plainName(value, ctx.cluster, 'metadata.ownerReferences.name');
  return value;
}

function deleteOptionsInPlace(opts: Obj, ctx: WriteContext): void {
  const pre = opts.preconditions;
  if (isObj(pre) && 'resourceVersion' in pre) pre.resourceVersion = ownRV(pre.resourceVersion, ctx);
}

/** DeleteOptions (delete, deletecollection, eviction): the precondition RV maps back; uid stays. */
export function deleteOptionsForCluster(opts: unknown, ctx: WriteContext): Rewritten<unknown> {
  return run(opts, () => {
    if (isObj(opts)) deleteOptionsInPlace(opts, ctx);
    return opts;
  });
}

/**
 * A protobuf object body (`application/vnd.kubernetes.protobuf`, what client-go ≥ 1.32 sends for built-in
 * kinds): the same rewrite as {@link objectForCluster}, on the ObjectMeta inside the envelope.
 */
export function protobufObjectForCluster(body: Uint8Array, ctx: WriteContext): Rewritten<Uint8Array> {
  return run(null, () => {
    try {
      return editProtobufObjectMeta(body, {
        name: (v) => (v === '' ? v : ctx.url ? checkUrlName(v, ctx) : plainName(v, ctx.cluster)),
        generateName: (v) => (v === '' ? v : plainName(v, ctx.cluster, 'metadata.generateName')),
        resourceVersion: (v) => String(ownRV(v, ctx)),
        label: (k, v) => (k === CLUSTER_LABEL ? undefined : v),
        annotation: (k, v) => {
          if (k === CLUSTER_LABEL) return undefined;
          if (k !== LAST_APPLIED) return v;
          const holder: Obj = { [LAST_APPLIED]: v };
          rewriteLastApplied(holder, ctx);
          return holder[LAST_APPLIED];
        },
        ownerName: (v) => (v === '' ? v : plainName(v, ctx.cluster, 'metadata.ownerReferences.name')),
        reference: (v, field) => plainName(v, ctx.cluster, field),
        echo: (v, objectName) => plainEcho(v, objectName || ctx.url?.fleet, ctx),
        selectorLabel: (k, v) => (k === CLUSTER_LABEL ? undefined : v),
      });
    } catch (e) {
      if (e instanceof ProtobufError)
        throw new Refusal(badRequest(`the protobuf body could not be decoded: ${e.message}`));
      throw e;
    }
  });
}
