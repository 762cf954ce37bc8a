/**
 * The resource verbs: get, list, watch, create, update, patch (4 types), delete, deletecollection, and
 * the status / scale / log subresources, with kube-apiserver's status codes and Status bodies.
 */

import { parse as parseYaml } from 'yaml';
import { applyOwnership } from './apply.ts';
import type { KubeObject, ResourceDef, SubresourceDef } from './catalog/types.ts';
import {
  checkFields,
  checkPatchFields,
  fieldValidationOf,
  pruneUnknownFields,
  warningHeader,
} from './fieldvalidation.ts';
import type { SimHost } from './host.ts';
import {
  BODY_TYPES,
  jsonResponse,
  negotiateResource,
  objectResponse,
  pageNotFound,
  parseMediaType,
  StatusError,
  type Target,
  unsupportedMediaType,
} from './http.ts';
import {
  allowsCreateOnUpdate,
  decodeLikeKube,
  defaultPodSpec,
  hasStatusSubresource,
  prepareForCreate,
  returnsDeletedObject,
  tracksGeneration,
} from './kinds.ts';
import { serveList } from './list.ts';
import { serveLog } from './logs.ts';
import {
  groupVersion,
  managerFromUserAgent,
  present,
  randomSuffix,
  recordManager,
  sameContent,
  specOf,
  timestamp,
  validName,
} from './objects.ts';
import { applyMerge, jsonPatch, mergePatch, parseJsonBody, strategicMergePatch } from './patch.ts';
import type { ResourceInfo } from './paths.ts';
import { containerNameCauses } from './podspec.ts';
import {
  hasProtobuf,
  isProtobufBody,
  negotiatedAnswer,
  protobufResponse,
  readProtobufBody,
} from './protobuf.ts';
import { parseFieldSelector, parseLabelSelector, type Selector, selectorMatches } from './selectors.ts';
import {
  alreadyExists,
  badRequest,
  conflict,
  failure,
  invalid,
  methodNotSupported,
  noRouteForMethod,
  notFound,
  qualified,
  type Status,
  success,
} from './status.ts';
import { clone, grKey, objectKey } from './store.ts';
import { bindPod, DEFAULT_AUDIENCE, issueToken } from './subresources.ts';
import { parseIncludeObject, partialObjectMetadata, toTable } from './table.ts';
import { serveWatch } from './watch.ts';

const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

const UPGRADE_SUBRESOURCES = new Set(['exec', 'attach', 'portforward']);

interface Ctx {
  sim: SimHost;
  req: Request;
  url: URL;
  q: URLSearchParams;
  info: ResourceInfo;
  def: ResourceDef;
  gr: string;
  /** Warning headers for the answer (field validation's Warn) */
  warnings: string[];
}

function kindOf(def: ResourceDef): { kind: string; group: string } {
  return { kind: def.kind, group: def.group };
}

/** The deprecation warning kube-apiserver 1.35 adds to every request to these APIs (of the kinds the sim serves). */
const DEPRECATED: Record<string, string> = {
  'v1/ComponentStatus': 'v1 ComponentStatus is deprecated in v1.19+',
  'v1/Endpoints': 'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice',
};

export async function handleResource(
  sim: SimHost,
  req: Request,
  url: URL,
  info: ResourceInfo,
): Promise<Response> {
  const def = sim.catalog.find(info.group, info.version, info.resource);
  if (!def) return pageNotFound();
  if (info.namespace !== undefined && !def.namespaced) return pageNotFound();
  const ctx: Ctx = {
    sim,
    req,
    url,
    q: url.searchParams,
    info,
    def,
    gr: grKey(def.group, def.resource),
    warnings: [],
  };
  const deprecated = DEPRECATED[`${groupVersion(def.group, info.version)}/${def.kind}`];
  if (deprecated) ctx.warnings.push(deprecated);
  let res: Response;
  try {
    res = await route(ctx);
  } catch (e) {
    if (e instanceof StatusError) e.warnings.push(...ctx.warnings);
    throw e;
  }
  for (const w of ctx.warnings) res.headers.append('Warning', warningHeader(w));
  return res;
}

async function route(ctx: Ctx): Promise<Response> {
  const { info, def } = ctx;

  if (info.subresource !== undefined) {
    const sub = def.subresources?.find((s) => s.name === info.subresource);
    if (!sub) return pageNotFound();
    return handleSubresource(ctx, sub);
  }
  const verb = info.verb;
  if (info.name !== undefined ? verb === 'create' : verb === 'update' || verb === 'patch')
    throw new StatusError(noRouteForMethod());
  if (!def.verbs.includes(verb)) {
    throw new StatusError(methodNotSupported(def.resource, def.group, verb));
  }
  // the core bindings resource is a request too: it binds the pod its body names
  if (def.group === '' && def.resource === 'bindings' && verb === 'create') return bind(ctx, undefined);
  switch (verb) {
    case 'get':
      return get(ctx);
    case 'list':
      return list(ctx);
    case 'watch':
      return watch(ctx);
    case 'create':
      return create(ctx);
    case 'update':
      return update(ctx);
    case 'patch':
      return patch(ctx);
    case 'delete':
      return del(ctx);
    case 'deletecollection':
      return deleteCollection(ctx);
  }
}

function target(ctx: Ctx, list: boolean, watch = false): Target {
  const proto = hasProtobuf(groupVersion(ctx.def.group, ctx.info.version), ctx.def.kind);
  const t = negotiateResource(ctx.req.headers.get('accept'), list, watch, proto);
  if ('kind' in t) throw new StatusError(t);
  return t;
}

function respondObject(ctx: Ctx, obj: KubeObject, status = 200): Response {
  const t = target(ctx, false);
  const full = present(obj, ctx.def, ctx.info.version);
  if (t.as === 'Table') {
    const include = parseIncludeObject(ctx.q.get('includeObject')) ?? 'Metadata';
    return jsonResponse(
      toTable(
        ctx.def,
        [full],
        { resourceVersion: obj.metadata.resourceVersion ?? '' },
        {
          version: t.version,
          includeObject: include,
          now: ctx.sim.clock(),
        },
      ),
      status,
    );
  }
  if (t.as === 'PartialObjectMetadata') {
    const pom = partialObjectMetadata(full, t.version);
    if (t.encoding === 'protobuf') return protobufResponse(pom, status, () => jsonResponse(pom, status));
    return jsonResponse(pom, status);
  }
  if (t.encoding === 'protobuf') return protobufResponse(full, status, () => objectResponse(t, full, status));
  return objectResponse(t, full, status);
}

function selectorOf(ctx: Ctx): Selector {
  const fields = parseFieldSelector(ctx.q.get('fieldSelector'), ctx.def.resource);
  if (ctx.info.name !== undefined)
    fields.push({ field: 'metadata.name', operator: '=', value: ctx.info.name });
  return { labels: parseLabelSelector(ctx.q.get('labelSelector')), fields };
}

function isDryRun(q: URLSearchParams): boolean {
  return q.getAll('dryRun').some((v) => v === 'All');
}

function currentOrNotFound(ctx: Ctx, name = ctx.info.name!): KubeObject {
  const obj = ctx.sim.store.get(ctx.gr, objectKey(ctx.info.namespace, name));
  if (!obj) throw new StatusError(notFound(ctx.def.resource, ctx.def.group, name));
  return obj;
}

// ------------------------------------------------------------------------------------------ reads

function get(ctx: Ctx): Response {
  return respondObject(ctx, currentOrNotFound(ctx));
}

function list(ctx: Ctx): Response {
  return serveList(ctx.sim.store, ctx.gr, {
    def: ctx.def,
    version: ctx.info.version,
    namespace: ctx.info.namespace,
    query: ctx.q,
    selector: selectorOf(ctx),
    target: target(ctx, true),
    now: ctx.sim.clock(),
  });
}

function watch(ctx: Ctx): Response {
  const sim = ctx.sim;
  return serveWatch(sim.store, ctx.gr, {
    def: ctx.def,
    version: ctx.info.version,
    namespace: ctx.info.namespace,
    query: ctx.q,
    selector: selectorOf(ctx),
    target: target(ctx, true, true),
    now: () => sim.clock(),
    bookmarkIntervalMs: sim.options.bookmarkIntervalMs,
    cutAfter: () => sim.faults.cutWatchesAfterEvents,
    register: (w) => sim.registerWatch(w),
    setTimer: (fn, ms, repeat) => sim.timer(fn, ms, repeat),
  });
}

// ------------------------------------------------------------------------------------------ bodies

async function readObject(ctx: Ctx): Promise<KubeObject> {
  const ct = parseMediaType(ctx.req.headers.get('content-type') || 'application/json');
  const mt = `${ct.type}/${ct.subtype}`;
  if (mt === 'application/vnd.kubernetes.protobuf') return readProtobuf(ctx);
  if (mt !== 'application/json' && mt !== 'application/yaml' && mt !== '*/*') {
    throw new StatusError(unsupportedMediaType(BODY_TYPES));
  }
  const text = await ctx.req.text();
  let body: unknown;
  try {
    body = mt === 'application/yaml' ? parseYaml(text) : JSON.parse(text);
  } catch (e) {
    throw new StatusError(badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`));
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new StatusError(
      badRequest(
        "couldn't get version/kind; json parse error: json: cannot unmarshal into Go value of type struct",
      ),
    );
  }
  const obj = body as KubeObject;
  checkTypeMeta(ctx, obj);
  if (!ctx.def.custom) {
    const directive = fieldValidationOf(
      ctx.q,
      ctx.info.verb === 'create' ? 'CreateOptions' : 'UpdateOptions',
    );
    const gv = groupVersion(ctx.def.group, ctx.info.version);
    ctx.warnings.push(
      ...checkFields(directive, gv, ctx.def.kind, obj, mt === 'application/yaml' ? undefined : text),
    );
    pruneUnknownFields(gv, ctx.def.kind, obj);
  }
  if (typeof obj.metadata !== 'object' || obj.metadata === null) obj.metadata = {};
  return obj;
}

/** A protobuf body (protobuf.ts: every built-in kind; a custom resource's is a 415). */
async function readProtobuf(ctx: Ctx): Promise<KubeObject> {
  const body = new Uint8Array(await ctx.req.arrayBuffer());
  const obj = readProtobufBody(body, groupVersion(ctx.def.group, ctx.info.version), ctx.def.kind);
  checkTypeMeta(ctx, obj);
  return obj;
}

function checkTypeMeta(ctx: Ctx, obj: KubeObject): void {
  const { def, info } = ctx;
  if (obj.kind !== undefined && obj.kind !== def.kind) {
    throw new StatusError(
      badRequest(
        `the object provided is unrecognized (must be of type ${def.kind}): kind "${obj.kind}" does not match (${def.kind})`,
      ),
    );
  }
  if (
    obj.apiVersion !== undefined &&
    obj.apiVersion.split('/')[0] !== (def.group || info.version) &&
    def.group !== ''
  ) {
    throw new StatusError(
      badRequest(
        `the API version in the data (${obj.apiVersion}) does not match the expected API version (${groupVersion(def.group, info.version)})`,
      ),
    );
  }
}

function fieldManager(ctx: Ctx): string {
  return ctx.q.get('fieldManager') || managerFromUserAgent(ctx.req.headers.get('user-agent'));
}

function checkNamespace(ctx: Ctx, obj: KubeObject): void {
  if (!ctx.def.namespaced) {
    delete obj.metadata.namespace;
    return;
  }
  const ns = ctx.info.namespace;
  if (obj.metadata.namespace && obj.metadata.namespace !== ns) {
    throw new StatusError(
      badRequest('the namespace of the provided object does not match the namespace sent on the request'),
    );
  }
  obj.metadata.namespace = ns;
}

/** NamespaceLifecycle admission. */
function admitNamespace(ctx: Ctx, ns: string | undefined, name: string): void {
  if (!ctx.def.namespaced || ns === undefined) return;
  const nsObj = ctx.sim.store.get(grKey('', 'namespaces'), objectKey(undefined, ns)) as
    | (KubeObject & { status?: { phase?: string } })
    | undefined;
  if (!nsObj) throw new StatusError(notFound('namespaces', '', ns));
  if (nsObj.status?.phase === 'Terminating') {
    throw new StatusError(
      failure(
        403,
        'Forbidden',
        `${qualified(ctx.def.resource, ctx.def.group)} "${name}" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
        {
          name,
          ...(ctx.def.group ? { group: ctx.def.group } : {}),
          kind: ctx.def.resource,
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${ns} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        },
      ),
    );
  }
}

function validateName(ctx: Ctx, obj: KubeObject): void {
  const { kind, group } = kindOf(ctx.def);
  const name = obj.metadata.name;
  if (!name) {
    throw new StatusError(
      invalid(kind, group, '', [
        {
          reason: 'FieldValueRequired',
          message: 'Required value: name or generateName is required',
          field: 'metadata.name',
        },
      ]),
    );
  }
  if (!validName(name)) {
    throw new StatusError(
      invalid(kind, group, name, [
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
          field: 'metadata.name',
        },
      ]),
    );
  }
}

/** container names, as pod validation checks them in every kind with a pod spec (podspec.ts) */
function validateContainers(ctx: Ctx, obj: KubeObject): void {
  const causes = containerNameCauses(ctx.def, obj);
  if (causes.length > 0)
    throw new StatusError(invalid(ctx.def.kind, ctx.def.group, obj.metadata.name ?? '', causes));
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A ConfigMap's or Secret's data keys, as kube validates them (a 422 naming each bad key), and a Secret's
 * data as base64, which kube decodes before anything else (a 400 at the first byte outside the alphabet).
 */
function validateDataKeys(ctx: Ctx, obj: KubeObject): void {
  const { def } = ctx;
  if (def.group !== '' || (def.resource !== 'configmaps' && def.resource !== 'secrets')) return;
  const o = obj as KubeObject & { data?: Record<string, unknown>; binaryData?: Record<string, unknown> };
  if (def.resource === 'secrets')
    for (const v of Object.values(o.data ?? {})) {
      const s = String(v);
      if (!BASE64.test(s)) {
        const at = s.search(/[^A-Za-z0-9+/=]/);
        throw new StatusError(
          badRequest(
            `Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${at < 0 ? s.indexOf('=') : at}`,
          ),
        );
      }
    }
  const causes = [
    ...Object.keys(o.data ?? {}).map((k) => ['data', k] as const),
    ...Object.keys(o.binaryData ?? {}).map((k) => ['binaryData', k] as const),
  ]
    .filter(([, k]) => k.length > 253 || !CONFIG_KEY.test(k) || k === '.' || k === '..')
    .map(([field, k]) => ({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${JSON.stringify(k)}: a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      field: `${field}[${k}]`,
    }));
  if (causes.length > 0) throw new StatusError(invalid(def.kind, def.group, obj.metadata.name ?? '', causes));
}

// ------------------------------------------------------------------------------------------ writes

/** The create path shared by POST, PUT-creates and apply-creates. */
function doCreate(
  ctx: Ctx,
  obj: KubeObject,
  manager: string,
  operation: 'Apply' | 'Update',
): { obj: KubeObject; dry: boolean } {
  const { sim, def } = ctx;
  checkNamespace(ctx, obj);
  if (!obj.metadata.name && obj.metadata.generateName)
    obj.metadata.name = `${obj.metadata.generateName}${randomSuffix()}`;
  validateName(ctx, obj);
  validateContainers(ctx, obj);
  validateDataKeys(ctx, obj);
  admitNamespace(ctx, obj.metadata.namespace, obj.metadata.name!);
  const key = objectKey(obj.metadata.namespace, obj.metadata.name!);
  if (sim.store.get(ctx.gr, key))
    throw new StatusError(alreadyExists(def.resource, def.group, obj.metadata.name!));
  obj.apiVersion = groupVersion(def.group, ctx.info.version);
  obj.kind = def.kind;
  const now = sim.clock();
  delete obj.metadata.resourceVersion;
  delete obj.metadata.deletionTimestamp;
  obj.metadata.uid = crypto.randomUUID();
  obj.metadata.creationTimestamp = timestamp(now);
  prepareForCreate(def, obj as KubeObject & Record<string, any>);
  decodeLikeKube(def, obj as KubeObject & Record<string, any>);
  if (tracksGeneration(def, obj)) obj.metadata.generation = 1;
  else delete obj.metadata.generation;
  recordManager(obj, manager, operation, obj.apiVersion, now);
  if (isDryRun(ctx.q)) return { obj, dry: true };
  return { obj: sim.store.put(ctx.gr, key, obj), dry: false };
}

async function create(ctx: Ctx): Promise<Response> {
  const obj = await readObject(ctx);
  const { obj: created } = doCreate(ctx, obj, fieldManager(ctx), 'Update');
  return respondObject(ctx, created, 201);
}

/**
 * Write `next` over `old`: optimistic concurrency on metadata.resourceVersion, immutable identity fields,
 * generation bump on spec change, and no write at all when nothing changed (etcd GuaranteedUpdate).
 * `part` limits the write to the main resource (status kept) or the status subresource (only status taken).
 */
function doUpdate(
  ctx: Ctx,
  old: KubeObject,
  next: KubeObject,
  part: 'main' | 'status',
  manager: string,
  operation: 'Apply' | 'Update',
  /** server-side apply: the applied configuration (the fields its manager owns), other owners' entries */
  ownership?: { fields: KubeObject; managedFields?: Array<Record<string, unknown>> },
): KubeObject {
  const { sim, def } = ctx;
  const name = old.metadata.name!;
  const rv = next.metadata.resourceVersion;
  if (rv !== undefined && rv !== '' && rv !== old.metadata.resourceVersion) {
    throw new StatusError(
      conflict(
        def.resource,
        def.group,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      ),
    );
  }
  let merged: KubeObject & Record<string, any>;
  if (part === 'status') {
    merged = clone(old) as KubeObject & Record<string, any>;
    if ('status' in next) merged.status = (next as Record<string, unknown>)['status'];
    else delete merged.status;
  } else {
    merged = clone(next) as KubeObject & Record<string, any>;
    if (hasStatusSubresource(def)) {
      if ('status' in old) merged.status = (old as Record<string, unknown>)['status'];
      else delete merged.status;
    }
    // identity and system fields are the server's
    merged.metadata.uid = old.metadata.uid;
    merged.metadata.creationTimestamp = old.metadata.creationTimestamp;
    merged.metadata.namespace = old.metadata.namespace;
    merged.metadata.name = old.metadata.name;
    if (old.metadata.deletionTimestamp) merged.metadata.deletionTimestamp = old.metadata.deletionTimestamp;
    else delete merged.metadata.deletionTimestamp;
    if (old.metadata.generation !== undefined) {
      merged.metadata.generation = old.metadata.generation + (specOf(merged) !== specOf(old) ? 1 : 0);
    }
  }
  merged.apiVersion = old.apiVersion ?? groupVersion(def.group, ctx.info.version);
  merged.kind = def.kind;
  merged.metadata.resourceVersion = old.metadata.resourceVersion;
  decodeLikeKube(def, merged);
  if (part === 'main') validateContainers(ctx, merged);
  if (part === 'main') validateDataKeys(ctx, merged);
  if (sameContent(merged, old)) return old;
  merged.metadata.managedFields = ownership?.managedFields ?? old.metadata.managedFields;
  recordManager(
    merged,
    manager,
    operation,
    groupVersion(def.group, ctx.info.version),
    sim.clock(),
    part === 'status' ? 'status' : undefined,
    part === 'status' ? { status: merged.status } : ownership?.fields,
  );
  if (isDryRun(ctx.q)) return merged;
  return sim.store.put(ctx.gr, objectKey(old.metadata.namespace, name), merged);
}

async function update(ctx: Ctx, part: 'main' | 'status' = 'main'): Promise<Response> {
  const obj = await readObject(ctx);
  const name = ctx.info.name!;
  if (obj.metadata.name && obj.metadata.name !== name) {
    throw new StatusError(
      badRequest(
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
      ),
    );
  }
  obj.metadata.name = name;
  if (ctx.def.namespaced && obj.metadata.namespace && obj.metadata.namespace !== ctx.info.namespace) {
    throw new StatusError(
      badRequest('the namespace of the provided object does not match the namespace sent on the request'),
    );
  }
  const old = ctx.sim.store.get(ctx.gr, objectKey(ctx.info.namespace, name));
  if (!old) {
    if (part === 'main' && allowsCreateOnUpdate(ctx.def)) {
      return respondObject(ctx, doCreate(ctx, obj, fieldManager(ctx), 'Update').obj, 201);
    }
    throw new StatusError(notFound(ctx.def.resource, ctx.def.group, name));
  }
  return respondObject(ctx, doUpdate(ctx, old, obj, part, fieldManager(ctx), 'Update'));
}

/** Apply a PATCH body of any supported type to `base` (a plain object: the resource, or a Scale). */
async function patchedObject(
  ctx: Ctx,
  base: KubeObject | undefined,
  allowStrategic: boolean,
): Promise<{ obj: KubeObject; apply: boolean; applied?: KubeObject }> {
  const ct = parseMediaType(ctx.req.headers.get('content-type') ?? '');
  const mt = `${ct.type}/${ct.subtype}`;
  const accepted = allowStrategic ? PATCH_TYPES : PATCH_TYPES.filter((t) => !t.includes('strategic'));
  // the patch handler's 415 is the generic HTTP error's wording (measured on kube 1.35)
  if (!accepted.includes(mt))
    throw new StatusError(failure(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {}));
  const text = await ctx.req.text();
  if (mt === 'application/apply-patch+yaml') {
    if (!ctx.q.get('fieldManager')) {
      throw new StatusError(
        invalid('PatchOptions', 'meta.k8s.io', '', [
          {
            reason: 'FieldValueRequired',
            message: 'Required value: is required for apply patch',
            field: 'fieldManager',
          },
        ]),
      );
    }
    let applied: unknown;
    try {
      applied = parseYaml(text);
    } catch (e) {
      throw new StatusError(badRequest(`error decoding YAML: ${(e as Error).message}`));
    }
    if (typeof applied !== 'object' || applied === null || Array.isArray(applied)) {
      throw new StatusError(badRequest('error decoding YAML: object expected'));
    }
    const a = applied as KubeObject;
    if (!a.apiVersion || !a.kind) {
      throw new StatusError(badRequest('invalid object type: /, Kind='));
    }
    checkTypeMeta(ctx, a);
    a.metadata ??= {};
    if (a.metadata.name && ctx.info.name && a.metadata.name !== ctx.info.name) {
      throw new StatusError(
        badRequest(
          `the name of the object (${a.metadata.name}) does not match the name on the URL (${ctx.info.name})`,
        ),
      );
    }
    return { obj: base ? (applyMerge(base, a) as KubeObject) : clone(a), apply: true, applied: a };
  }
  if (!base) throw new StatusError(notFound(ctx.def.resource, ctx.def.group, ctx.info.name!));
  let obj: KubeObject;
  switch (mt) {
    case 'application/json-patch+json':
      obj = jsonPatch(base, text) as KubeObject;
      break;
    case 'application/merge-patch+json':
      obj = mergePatch(base, parseJsonBody(text)) as KubeObject;
      break;
    default:
      obj = strategicMergePatch(base, parseJsonBody(text)) as KubeObject;
  }
  // field validation sees the resource's own kind (a Scale patch is checked by its own handler, not here)
  if (!ctx.def.custom && base.kind === ctx.def.kind) {
    const directive = fieldValidationOf(ctx.q, 'PatchOptions');
    const gv = groupVersion(ctx.def.group, ctx.info.version);
    ctx.warnings.push(...checkPatchFields(directive, gv, ctx.def.kind, mt, text, obj));
    pruneUnknownFields(gv, ctx.def.kind, obj);
  }
  return { obj, apply: false };
}

async function patch(ctx: Ctx, part: 'main' | 'status' = 'main'): Promise<Response> {
  const name = ctx.info.name!;
  const old = ctx.sim.store.get(ctx.gr, objectKey(ctx.info.namespace, name));
  const { obj, apply, applied } = await patchedObject(ctx, old, !ctx.def.custom);
  const manager = apply ? ctx.q.get('fieldManager')! : fieldManager(ctx);
  // an Apply manager owns what it applied; taking another's field is a Conflict unless forced
  const ownership =
    applied && old && part === 'main'
      ? {
          fields: applied,
          managedFields: applyOwnership(old, applied, manager, ctx.q.get('force') === 'true', ctx.def),
        }
      : undefined;
  if (!old) {
    // server-side apply creates
    obj.metadata.name = name;
    const created = doCreate(ctx, obj, manager, 'Apply').obj;
    return respondObject(ctx, created, 201);
  }
  if (typeof obj !== 'object' || obj === null || typeof obj.metadata !== 'object') {
    throw new StatusError(badRequest('the patch removed the object metadata'));
  }
  // a patch that renames is refused like an update whose body names another object (measured on kube 1.35)
  if (obj.metadata.name !== undefined && obj.metadata.name !== name) {
    throw new StatusError(
      badRequest(
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
      ),
    );
  }
  // a patch carrying metadata.resourceVersion is a precondition; otherwise it applies to the latest
  if (obj.metadata.resourceVersion === old.metadata.resourceVersion) delete obj.metadata.resourceVersion;
  return respondObject(ctx, doUpdate(ctx, old, obj, part, manager, apply ? 'Apply' : 'Update', ownership));
}

// ------------------------------------------------------------------------------------------ delete

interface DeleteOptions {
  propagationPolicy?: string;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: string[];
  orphanDependents?: boolean;
}

async function deleteOptions(ctx: Ctx): Promise<DeleteOptions> {
  let opts: DeleteOptions = {};
  // client-go's typed clients (Helm's release store among them) send DeleteOptions in protobuf
  if (ctx.req.method === 'DELETE' && isProtobufBody(ctx.req)) {
    const body = new Uint8Array(await ctx.req.arrayBuffer());
    if (body.length > 0) {
      opts = readProtobufBody(
        body,
        groupVersion(ctx.def.group, ctx.info.version),
        'DeleteOptions',
      ) as DeleteOptions;
    }
  }
  const text = ctx.req.method === 'DELETE' && !isProtobufBody(ctx.req) ? await ctx.req.text() : '';
  if (text.trim()) {
    try {
      opts = JSON.parse(text);
    } catch (e) {
      throw new StatusError(
        badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`),
      );
    }
  }
  const q = ctx.q;
  if (q.get('propagationPolicy')) opts.propagationPolicy = q.get('propagationPolicy')!;
  if (q.get('gracePeriodSeconds')) opts.gracePeriodSeconds = Number(q.get('gracePeriodSeconds'));
  if (q.getAll('dryRun').length) opts.dryRun = q.getAll('dryRun');
  const badDryRun = (opts.dryRun ?? []).filter((v) => v !== 'All');
  if (badDryRun.length)
    throw new StatusError(
      invalid('DeleteOptions', 'meta.k8s.io', '', [
        {
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: ${JSON.stringify(opts.dryRun)}: supported values: "All"`,
          field: 'dryRun',
        },
      ]),
    );
  const policy = opts.propagationPolicy;
  if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
    throw new StatusError(
      invalid('DeleteOptions', 'meta.k8s.io', '', [
        {
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
          field: 'propagationPolicy',
        },
      ]),
    );
  }
  return opts;
}

/** Delete one object: preconditions, dry run, dependents (garbage collector), namespace teardown. */
function deleteOne(ctx: Ctx, name: string, opts: DeleteOptions): KubeObject {
  const { sim, def } = ctx;
  const obj = currentOrNotFound(ctx, name);
  const pre = opts.preconditions;
  if (pre?.uid && pre.uid !== obj.metadata.uid) {
    throw new StatusError(
      conflict(
        def.kind,
        def.group,
        name,
        `the UID in the precondition (${pre.uid}) does not match the UID in record (${obj.metadata.uid}). The object might have been deleted and then recreated`,
      ),
    );
  }
  if (pre?.resourceVersion && pre.resourceVersion !== obj.metadata.resourceVersion) {
    throw new StatusError(
      conflict(
        def.kind,
        def.group,
        name,
        `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${obj.metadata.resourceVersion}). The object might have been modified`,
      ),
    );
  }
  if (opts.dryRun?.includes('All')) return obj;
  const orphan = opts.propagationPolicy === 'Orphan' || opts.orphanDependents === true;
  if (def.group === '' && def.resource === 'namespaces') return sim.terminateNamespace(obj);
  return sim.deleteObject(ctx.gr, obj, orphan ? 'Orphan' : 'Background');
}

async function del(ctx: Ctx): Promise<Response> {
  const opts = await deleteOptions(ctx);
  const gone = deleteOne(ctx, ctx.info.name!, opts);
  if (returnsDeletedObject(ctx.def)) return respondObject(ctx, gone);
  const done: Partial<Status> = success({
    name: gone.metadata.name!,
    ...(ctx.def.group ? { group: ctx.def.group } : {}),
    kind: ctx.def.resource,
    uid: gone.metadata.uid!,
  });
  // the registry's delete Status carries no code (measured on kube 1.35)
  delete done.code;
  return jsonResponse(done);
}

async function deleteCollection(ctx: Ctx): Promise<Response> {
  const opts = await deleteOptions(ctx);
  const sel = selectorOf(ctx);
  const items = ctx.sim.store
    .snapshot(ctx.gr, undefined, ctx.info.namespace)
    .filter((e) => selectorMatches(sel, e.obj, ctx.def.resource))
    .map((e) => e.obj.metadata.name!);
  const deleted = items.map((n) => deleteOne(ctx, n, opts));
  return jsonResponse({
    kind: `${ctx.def.kind}List`,
    apiVersion: groupVersion(ctx.def.group, ctx.info.version),
    metadata: { resourceVersion: String(ctx.sim.store.resourceVersion) },
    items: deleted.map((o) => present(o, ctx.def, ctx.info.version, !!ctx.def.custom)),
  });
}

// ------------------------------------------------------------------------------------------ subresources

async function handleSubresource(ctx: Ctx, sub: SubresourceDef): Promise<Response> {
  const { info, def } = ctx;
  if (UPGRADE_SUBRESOURCES.has(sub.name)) {
    if (!sub.verbs.includes(info.verb === 'create' ? 'create' : 'get')) {
      throw new StatusError(methodNotSupported(`${def.resource}/${sub.name}`, def.group, info.verb));
    }
    currentOrNotFound(ctx);
    throw new StatusError(badRequest('Upgrade request required'));
  }
  const verb = info.verb === 'watch' ? 'get' : info.verb;
  if (!sub.verbs.includes(verb)) {
    throw new StatusError(methodNotSupported(`${def.resource}/${sub.name}`, def.group, verb));
  }
  switch (sub.name) {
    case 'status':
      if (verb === 'get') return get(ctx);
      if (verb === 'update') return update(ctx, 'status');
      if (verb === 'patch') return patch(ctx, 'status');
      break;
    case 'scale':
      return scale(ctx, verb);
    case 'log':
      return log(ctx);
    case 'eviction':
      return evict(ctx);
    case 'token':
      return token(ctx);
    case 'ephemeralcontainers':
      return ephemeralContainers(ctx, verb);
    case 'binding':
      return bind(ctx, info.name!);
  }
  throw new StatusError(methodNotSupported(`${def.resource}/${sub.name}`, def.group, verb));
}

/**
 * A subresource's request body of type `kind` (Eviction, TokenRequest, Binding): JSON, YAML or protobuf
 * (what client-go sends), kube's 400/415 otherwise; an empty body is an empty object.
 */
async function readRequestBody(
  ctx: Ctx,
  apiVersion: string,
  kind: string,
): Promise<KubeObject & Record<string, any>> {
  if (isProtobufBody(ctx.req)) {
    const bytes = new Uint8Array(await ctx.req.arrayBuffer());
    return bytes.length ? readProtobufBody(bytes, apiVersion, kind) : { metadata: {} };
  }
  const mt = parseMediaType(ctx.req.headers.get('content-type') || 'application/json');
  const type = `${mt.type}/${mt.subtype}`;
  if (type !== 'application/json' && type !== 'application/yaml' && type !== '*/*')
    throw new StatusError(unsupportedMediaType(BODY_TYPES));
  const text = await ctx.req.text();
  if (!text.trim()) return { metadata: {} };
  let body: unknown;
  try {
    body = type === 'application/yaml' ? parseYaml(text) : JSON.parse(text);
  } catch (e) {
    throw new StatusError(badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`));
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new StatusError(badRequest(`the object provided is unrecognized (must be of type ${kind})`));
  const o = body as KubeObject & Record<string, any>;
  if (o.kind !== undefined && o.kind !== kind)
    throw new StatusError(
      badRequest(
        `the object provided is unrecognized (must be of type ${kind}): kind "${o.kind}" does not match (${kind})`,
      ),
    );
  o.metadata ??= {};
  return o;
}

/**
 * pods/eviction: the Eviction's deleteOptions (JSON or protobuf body, policy/v1 or v1beta1) applied to
 * the pod named in the URL, which must be the Eviction's own name. PodDisruptionBudgets are not consulted.
 */
async function evict(ctx: Ctx): Promise<Response> {
  const name = ctx.info.name!;
  const ev = await readRequestBody(ctx, 'policy/v1', 'Eviction');
  if (ev.metadata?.name && ev.metadata.name !== name)
    throw new StatusError(badRequest('name in URL does not match name in Eviction object'));
  const opts: DeleteOptions = { ...(ev.deleteOptions ?? {}) };
  if (isDryRun(ctx.q)) opts.dryRun = ['All'];
  currentOrNotFound(ctx);
  deleteOne(ctx, name, opts);
  return jsonResponse(success(), 201);
}

/**
 * pods/ephemeralcontainers (kubectl debug): get shows the pod; update and patch change only
 * spec.ephemeralContainers, which may grow but never lose or change a container (kube's
 * ValidatePodEphemeralContainersUpdate).
 */
async function ephemeralContainers(ctx: Ctx, verb: string): Promise<Response> {
  const old = currentOrNotFound(ctx) as KubeObject & Record<string, any>;
  if (verb === 'get') return respondObject(ctx, old);
  const next = verb === 'update' ? await readObject(ctx) : (await patchedObject(ctx, old, true)).obj;
  const want: any[] = (next as Record<string, any>).spec?.ephemeralContainers ?? [];
  const had: any[] = old.spec?.ephemeralContainers ?? [];
  const name = ctx.info.name!;
  const causes = [];
  for (const [i, c] of want.entries()) {
    if (!c?.name)
      causes.push({
        reason: 'FieldValueRequired',
        message: 'Required value',
        field: `spec.ephemeralContainers[${i}].name`,
      });
  }
  for (const h of had) {
    const now = want.find((c) => c?.name === h.name);
    if (!now || JSON.stringify(withDefaults(now)) !== JSON.stringify(h))
      causes.push({
        reason: 'FieldValueForbidden',
        message: `Forbidden: existing ephemeral containers "${h.name}" may not be removed or changed`,
        field: 'spec.ephemeralContainers',
      });
  }
  if (causes.length) throw new StatusError(invalid('Pod', '', name, causes));
  const target = clone(old) as KubeObject & Record<string, any>;
  target.spec.ephemeralContainers = want.map((c) =>
    had.some((h) => h.name === c.name) ? had.find((h) => h.name === c.name) : withDefaults(c),
  );
  const rv = next.metadata?.resourceVersion;
  if (rv) target.metadata.resourceVersion = rv;
  else delete target.metadata.resourceVersion;
  return respondObject(ctx, doUpdate(ctx, old, target, 'main', fieldManager(ctx), 'Update'));
}

/** An ephemeral container with the API's container defaults (pull policy, termination message). */
function withDefaults(c: Record<string, any>): Record<string, any> {
  const spec = { containers: [clone(c as KubeObject)] };
  defaultPodSpec(spec);
  return spec.containers[0]!;
}

/** serviceaccounts/token: a TokenRequest for an existing service account (`kubectl create token`). */
async function token(ctx: Ctx): Promise<Response> {
  const body = await readRequestBody(ctx, 'authentication.k8s.io/v1', 'TokenRequest');
  const sa = currentOrNotFound(ctx) as KubeObject & Record<string, any>;
  const issued = issueToken(sa, body, ctx.sim.clock(), DEFAULT_AUDIENCE);
  return negotiatedAnswer(ctx.req.headers.get('accept'), issued, 201);
}

/**
 * pods/binding, and POST .../bindings naming the pod in metadata.name: the pod is put on the target node
 * (the kubelet then starts it). Success is a Status, 201, as BindingREST answers.
 */
async function bind(ctx: Ctx, podName: string | undefined): Promise<Response> {
  const body = await readRequestBody(ctx, 'v1', 'Binding');
  const name = podName ?? body.metadata?.name;
  if (!name)
    throw new StatusError(
      invalid('Binding', '', '', [
        {
          reason: 'FieldValueRequired',
          message: 'Required value: name or generateName is required',
          field: 'metadata.name',
        },
      ]),
    );
  const pods = grKey('', 'pods');
  const pod = ctx.sim.store.get(pods, objectKey(ctx.info.namespace, name));
  if (!pod) throw new StatusError(notFound('pods', '', name));
  const bound = bindPod(pod as KubeObject & Record<string, any>, body);
  if (!isDryRun(ctx.q)) ctx.sim.store.put(pods, objectKey(ctx.info.namespace, name), bound);
  return jsonResponse(success(), 201);
}

function toScale(obj: KubeObject & Record<string, any>): KubeObject & Record<string, any> {
  const sel = obj.spec?.selector;
  const selector =
    sel?.matchLabels || sel?.matchExpressions
      ? Object.entries(sel.matchLabels ?? {})
          .map(([k, v]) => `${k}=${v}`)
          .join(',')
      : '';
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    spec: { replicas: obj.spec?.replicas ?? 0 },
    status: { replicas: obj.status?.replicas ?? 0, ...(selector ? { selector } : {}) },
  };
}

async function scale(ctx: Ctx, verb: string): Promise<Response> {
  const old = currentOrNotFound(ctx) as KubeObject & Record<string, any>;
  const current = toScale(old);
  if (verb === 'get') return scaleAnswer(ctx, current);
  let next: KubeObject & Record<string, any>;
  if (verb === 'update') {
    next = (await readObjectLoose(ctx)) as KubeObject & Record<string, any>;
  } else {
    next = (await patchedObject(ctx, current, true)).obj as KubeObject & Record<string, any>;
  }
  const replicas = next.spec?.replicas;
  if (typeof replicas !== 'number' || replicas < 0) {
    throw new StatusError(
      invalid('Scale', 'autoscaling', ctx.info.name!, [
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${replicas}: must be greater than or equal to 0`,
          field: 'spec.replicas',
        },
      ]),
    );
  }
  const rv = next.metadata?.resourceVersion;
  const target = clone(old);
  target.spec = { ...(target.spec ?? {}), replicas };
  if (rv) target.metadata.resourceVersion = rv;
  else delete target.metadata.resourceVersion;
  const updated = doUpdate(ctx, old, target, 'main', fieldManager(ctx), 'Update') as KubeObject &
    Record<string, any>;
  return scaleAnswer(ctx, toScale(updated));
}

/** A Scale in the encoding the client asked for first (autoscaling/v1 Scale has a protobuf form). */
function scaleAnswer(ctx: Ctx, scale: KubeObject): Response {
  const t = target(ctx, false);
  if (t.encoding === 'protobuf') return protobufResponse(scale, 200, () => jsonResponse(scale));
  return jsonResponse(scale);
}

async function readObjectLoose(ctx: Ctx): Promise<KubeObject> {
  const ct = parseMediaType(ctx.req.headers.get('content-type') || 'application/json');
  if (`${ct.type}/${ct.subtype}` === 'application/vnd.kubernetes.protobuf') {
    return readProtobufBody(new Uint8Array(await ctx.req.arrayBuffer()), 'autoscaling/v1', 'Scale');
  }
  const text = await ctx.req.text();
  try {
    const o = JSON.parse(text);
    o.metadata ??= {};
    return o;
  } catch (e) {
    throw new StatusError(badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`));
  }
}

function log(ctx: Ctx): Response {
  const sim = ctx.sim;
  const pod = currentOrNotFound(ctx);
  sim.ensureLogs(pod);
  const key = objectKey(pod.metadata.namespace, pod.metadata.name!);
  return serveLog({
    pod,
    query: ctx.q,
    now: () => sim.clock(),
    logs: sim.logs,
    onPodGone: (stop) =>
      sim.store.subscribe(ctx.gr, (ev) => {
        if (ev.type === 'DELETED' && ev.key === key) stop();
      }),
    track: (stop) => sim.trackStream(stop),
  });
}
