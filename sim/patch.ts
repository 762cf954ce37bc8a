/**
 * The four patch types kube-apiserver accepts, with its error mapping:
 * - JSON patch (RFC 6902): undecodable → 400 BadRequest; an op that cannot apply (incl. a failed `test`)
 *   → 422 with the jsonpatch error as an UnexpectedServerResponse cause (apierrors.NewGenericServerResponse).
 * - JSON merge patch (RFC 7386): undecodable → 400.
 * - Strategic merge patch: merge keys per field (the `patchMergeKey` tags of k8s.io/api), plus the
 *   directives kubectl's three-way patch sends.
 * - Server-side apply lives in handlers (it needs the live object and field managers); its merge is
 *   `applyMerge` below.
 */

import { StatusError } from './http.ts';
import { badRequest, failure } from './status.ts';

type Json = unknown;
type JsonObject = Record<string, Json>;

function isObject(x: Json): x is JsonObject {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function clone<T>(x: T): T {
  return structuredClone(x);
}

function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

function unprocessable(message: string): StatusError {
  return new StatusError(
    failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {
      causes: [{ reason: 'UnexpectedServerResponse', message }],
    }),
  );
}

export function parseJsonBody(text: string): Json {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new StatusError(badRequest(`error decoding patch: ${(e as Error).message}`));
  }
}

// ---------------------------------------------------------------------------------------------------
// RFC 6902

interface Op {
  op: string;
  path: string;
  from?: string;
  value?: Json;
}

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw unprocessable(`invalid JSON pointer: ${p}`);
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function getAt(doc: Json, path: string[]): { found: boolean; value?: Json } {
  let cur: Json = doc;
  for (const seg of path) {
    if (Array.isArray(cur)) {
      const i = Number(seg);
      if (!/^\d+$/.test(seg) || i >= cur.length) return { found: false };
      cur = cur[i];
    } else if (isObject(cur)) {
      if (!Object.hasOwn(cur, seg)) return { found: false };
      cur = cur[seg];
    } else return { found: false };
  }
  return { found: true, value: cur };
}

function parentOf(doc: Json, path: string[], opPath: string): { parent: Json; last: string } {
  const parent = getAt(doc, path.slice(0, -1));
  if (!parent.found || parent.value === null || typeof parent.value !== 'object') {
    throw unprocessable(`doc is missing path: "${opPath}": missing value`);
  }
  return { parent: parent.value, last: path[path.length - 1]! };
}

function addAt(doc: Json, path: string[], value: Json, opPath: string): Json {
  if (path.length === 0) return value;
  const { parent, last } = parentOf(doc, path, opPath);
  if (Array.isArray(parent)) {
    const i = last === '-' ? parent.length : Number(last);
    if (!/^\d+$/.test(last) && last !== '-') throw unprocessable(`Unable to access invalid index: ${last}`);
    if (i > parent.length) throw unprocessable(`Unable to access invalid index: ${i}`);
    parent.splice(i, 0, value);
  } else (parent as JsonObject)[last] = value;
  return doc;
}

function removeAt(doc: Json, path: string[], opPath: string): { doc: Json; removed: Json } {
  if (path.length === 0) return { doc: null, removed: doc };
  const { parent, last } = parentOf(doc, path, opPath);
  if (Array.isArray(parent)) {
    const i = Number(last);
    if (!/^\d+$/.test(last) || i >= parent.length) {
      throw unprocessable(`Unable to remove nonexistent key: ${last}: missing value`);
    }
    return { doc, removed: parent.splice(i, 1)[0] };
  }
  const o = parent as JsonObject;
  if (!Object.hasOwn(o, last))
    throw unprocessable(`Unable to remove nonexistent key: ${last}: missing value`);
  const removed = o[last];
  delete o[last];
  return { doc, removed };
}

export function jsonPatch(original: Json, patchText: string): Json {
  const ops = parseJsonBody(patchText);
  if (!Array.isArray(ops)) {
    throw new StatusError(badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch'));
  }
  let doc = clone(original);
  for (const raw of ops as Op[]) {
    if (!isObject(raw) || typeof raw.op !== 'string') throw unprocessable('Unexpected kind: unknown');
    if (typeof raw.path !== 'string') throw unprocessable(`${raw.op} operation missing path`);
    const path = parsePointer(raw.path);
    switch (raw.op) {
      case 'add':
        doc = addAt(doc, path, clone(raw.value), raw.path);
        break;
      case 'remove':
        doc = removeAt(doc, path, raw.path).doc;
        break;
      case 'replace': {
        // json-patch v4 (what kube vendors) sets a missing object key; only a missing parent or index fails
        const p = path.length ? getAt(doc, path.slice(0, -1)) : undefined;
        const setsKey = !!p?.found && isObject(p.value) && !Array.isArray(p.value);
        if (!setsKey && !getAt(doc, path).found)
          throw unprocessable(
            `replace operation does not apply: doc is missing key: ${raw.path}: missing value`,
          );
        if (path.length === 0) doc = clone(raw.value);
        else {
          const { parent, last } = parentOf(doc, path, raw.path);
          if (Array.isArray(parent)) parent[Number(last)] = clone(raw.value);
          else (parent as JsonObject)[last] = clone(raw.value);
        }
        break;
      }
      case 'move':
      case 'copy': {
        if (typeof raw.from !== 'string') throw unprocessable(`${raw.op} operation missing from`);
        const from = parsePointer(raw.from);
        const src = getAt(doc, from);
        if (!src.found)
          throw unprocessable(
            `${raw.op} operation does not apply: doc is missing from path: ${raw.from}: missing value`,
          );
        let value = clone(src.value);
        if (raw.op === 'move') value = removeAt(doc, from, raw.from).removed;
        doc = addAt(doc, path, value, raw.path);
        break;
      }
      case 'test': {
        const at = getAt(doc, path);
        if (!at.found || !deepEqual(at.value, raw.value))
          // kube answers a failed test op with the bare 422, no causes (measured on kube 1.35)
          throw new StatusError(
            failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {}),
          );
        break;
      }
      default:
        throw unprocessable(`Unexpected kind: ${raw.op}`);
    }
  }
  return doc;
}

// ---------------------------------------------------------------------------------------------------
// RFC 7386

export function mergePatch(original: Json, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(original) ? clone(original) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Strategic merge patch

/**
 * patchMergeKey of list fields, from the k8s.io/api struct tags. Looked up by `<parent field>.<field>` first
 * (ports differ between containers and services), then by field name.
 */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  'containers.ports': 'containerPort',
  'initContainers.ports': 'containerPort',
  'ephemeralContainers.ports': 'containerPort',
  'spec.ports': 'port',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  conditions: 'type',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  ownerReferences: 'uid',
  taints: 'key',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
  schedulingGates: 'name',
  podIPs: 'ip',
  hostIPs: 'ip',
  addresses: 'type',
  containerStatuses: 'name',
  initContainerStatuses: 'name',
  ephemeralContainerStatuses: 'name',
  secrets: 'name',
};

/** Primitive lists with patchStrategy merge (union, `$deleteFromPrimitiveList` removes). */
const MERGE_PRIMITIVE_LISTS = new Set(['finalizers']);

/** Maps with patchStrategy retainKeys accept `$retainKeys`; nothing to configure: the directive is explicit. */

function mergeKeyFor(parent: string, field: string): string | undefined {
  return MERGE_KEYS[`${parent}.${field}`] ?? MERGE_KEYS[field];
}

const DIRECTIVE = '$patch';
const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';
const RETAIN_KEYS = '$retainKeys';

export function strategicMergePatch(original: Json, patch: Json): Json {
  if (!isObject(patch)) {
    throw new StatusError(
      badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}'),
    );
  }
  return smpMap(isObject(original) ? original : {}, patch, '');
}

function smpMap(original: JsonObject, patch: JsonObject, self: string): JsonObject {
  const directive = patch[DIRECTIVE];
  if (directive === 'replace') {
    const { [DIRECTIVE]: _, ...rest } = patch;
    return stripDirectives(rest) as JsonObject;
  }
  if (directive !== undefined && directive !== 'merge' && directive !== 'delete') {
    throw new StatusError(
      badRequest(`Unable to find api field in struct ... for the json field "${DIRECTIVE}"`),
    );
  }
  const out: JsonObject = clone(original);
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw new StatusError(badRequest('invalid patch format of retainKeys'));
    for (const k of Object.keys(out)) if (!retain.includes(k) && !Object.hasOwn(patch, k)) delete out[k];
  }
  const orders: Record<string, Json[]> = {};
  const deletions: Record<string, Json[]> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === DIRECTIVE || k === RETAIN_KEYS) continue;
    if (k.startsWith(SET_ORDER)) {
      if (!Array.isArray(v))
        throw new StatusError(badRequest('invalid patch format of setElementOrder list'));
      orders[k.slice(SET_ORDER.length)] = v;
      continue;
    }
    if (k.startsWith(DELETE_PRIMITIVE)) {
      if (!Array.isArray(v)) throw new StatusError(badRequest('invalid patch format of primitive list'));
      deletions[k.slice(DELETE_PRIMITIVE.length)] = v;
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    if (isObject(v)) {
      if (v[DIRECTIVE] === 'delete') {
        delete out[k];
        continue;
      }
      out[k] = smpMap(isObject(out[k]) ? (out[k] as JsonObject) : {}, v, k);
      continue;
    }
    if (Array.isArray(v)) {
      const key = mergeKeyFor(self, k);
      const cur = Array.isArray(out[k]) ? (out[k] as Json[]) : [];
      if (key) out[k] = smpList(cur, v, key, k);
      else if (MERGE_PRIMITIVE_LISTS.has(k))
        out[k] = [...cur, ...v.filter((x) => !cur.some((c) => deepEqual(c, x)))];
      else out[k] = stripDirectives(clone(v));
      continue;
    }
    out[k] = v;
  }
  for (const [field, values] of Object.entries(deletions)) {
    const cur = out[field];
    if (Array.isArray(cur)) out[field] = cur.filter((x) => !values.some((d) => deepEqual(d, x)));
  }
  for (const [field, order] of Object.entries(orders)) {
    const cur = out[field];
    if (!Array.isArray(cur)) continue;
    const key = mergeKeyFor(self, field);
    out[field] = applyOrder(cur, order, key);
  }
  return out;
}

function smpList(original: Json[], patch: Json[], key: string, field: string): Json[] {
  if (patch.some((p) => isObject(p) && p[DIRECTIVE] === 'replace')) {
    return stripDirectives(patch.filter((p) => !(isObject(p) && p[DIRECTIVE] === 'replace'))) as Json[];
  }
  const out = clone(original);
  for (const p of patch) {
    if (!isObject(p)) {
      // a list of primitives under a merge key field: treat as replace of that element
      if (!out.some((x) => deepEqual(x, p))) out.push(p);
      continue;
    }
    if (!Object.hasOwn(p, key)) {
      throw new StatusError(
        badRequest(`map: ${JSON.stringify(p)} does not contain declared merge key: ${key}`),
      );
    }
    const i = out.findIndex((x) => isObject(x) && deepEqual(x[key], p[key]));
    if (p[DIRECTIVE] === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    if (i >= 0) out[i] = smpMap(out[i] as JsonObject, p, field);
    else out.push(smpMap({}, p, field));
  }
  return out;
}

/** `$setElementOrder`: the patch's order for the items it names, the server-only items keep their relative place after. */
function applyOrder(list: Json[], order: Json[], key: string | undefined): Json[] {
  const id = (x: Json) => (key && isObject(x) ? JSON.stringify(x[key]) : JSON.stringify(x));
  const orderIds = order.map((o) => (key && isObject(o) ? JSON.stringify(o[key]) : JSON.stringify(o)));
  const byId = new Map(list.map((x) => [id(x), x]));
  const ordered = orderIds.filter((i) => byId.has(i)).map((i) => byId.get(i)!);
  const rest = list.filter((x) => !orderIds.includes(id(x)));
  return [...ordered, ...rest];
}

function stripDirectives(x: Json): Json {
  if (Array.isArray(x)) return x.map(stripDirectives);
  if (!isObject(x)) return x;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(x)) {
    if (k === DIRECTIVE || k === RETAIN_KEYS || k.startsWith(SET_ORDER) || k.startsWith(DELETE_PRIMITIVE))
      continue;
    out[k] = stripDirectives(v);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Server-side apply (merge half): lists with a merge key are maps keyed by it (listType=map), other
// lists are atomic, maps merge recursively.

export function applyMerge(live: Json, applied: Json, parent = ''): Json {
  if (isObject(live) && isObject(applied)) {
    const out: JsonObject = clone(live);
    for (const [k, v] of Object.entries(applied)) {
      if (Array.isArray(v) && Array.isArray(out[k])) {
        const key = mergeKeyFor(parent, k);
        if (key && v.every(isObject)) {
          const cur = clone(out[k] as Json[]);
          for (const item of v as JsonObject[]) {
            const i = cur.findIndex((x) => isObject(x) && deepEqual(x[key], item[key]));
            if (i >= 0) cur[i] = applyMerge(cur[i], item, k);
            else cur.push(clone(item));
          }
          out[k] = cur;
          continue;
        }
      }
      out[k] = k in out ? applyMerge(out[k], v, k) : clone(v);
    }
    return out;
  }
  return clone(applied);
}

/** Lists whose items kube keys by more than one field in field sets (+listMapKey), by parent.field. */
const LIST_MAP_KEYS: Record<string, string[]> = {
  'spec.ports': ['port', 'protocol'],
  'containers.ports': ['containerPort', 'protocol'],
  'initContainers.ports': ['containerPort', 'protocol'],
};

/** Fields of value (non-pointer) struct type in kube's API types: present in every object of their kind. */
const STRUCT_FIELDS = new Set([
  'metadata',
  'spec',
  'status',
  'template',
  'strategy',
  'updateStrategy',
  'jobTemplate',
]);

/** FieldsV1 (the `f:`/`k:` set) describing every field present in `obj`. */
export function fieldsV1(obj: Json, parent = ''): JsonObject {
  const out: JsonObject = {};
  if (!isObject(obj)) return out;
  for (const [k, v] of Object.entries(obj)) {
    if (parent === '' && (k === 'apiVersion' || k === 'kind')) continue;
    if (
      parent === 'metadata' &&
      [
        'name',
        'namespace',
        'uid',
        'resourceVersion',
        'generation',
        'creationTimestamp',
        'managedFields',
      ].includes(k)
    )
      continue;
    const f: JsonObject = {};
    if (isObject(v)) {
      // a struct that is always there (not a pointer or a map) has no "." of its own in kube's field sets
      Object.assign(f, STRUCT_FIELDS.has(k) ? {} : { '.': {} }, fieldsV1(v, k));
      if (Object.keys(f).length === 1 && Object.keys(v).length === 0) delete f['.'];
    } else if (Array.isArray(v)) {
      const key = mergeKeyFor(parent, k);
      const keys = LIST_MAP_KEYS[`${parent}.${k}`] ?? (key ? [key] : undefined);
      if (keys) {
        for (const item of v) {
          if (!isObject(item)) continue;
          const id = Object.fromEntries(keys.filter((x) => item[x] !== undefined).map((x) => [x, item[x]]));
          f[`k:${JSON.stringify(id)}`] = { '.': {}, ...fieldsV1(item, k) };
        }
      }
    }
    out[`f:${k}`] = f;
  }
  if (parent === '' && isObject(obj['metadata']) && Object.keys(out['f:metadata'] ?? {}).length === 0) {
    delete out['f:metadata'];
  }
  return out;
}
