/**
 * OpenAPI documents of a simulated kube-apiserver: the v3 root (/openapi/v3) with content hashes,
 * one v3 document per group-version (/openapi/v3/api/v1, /openapi/v3/apis/<g>/<v>) and the
 * Swagger 2.0 document (/openapi/v2).
 *
 * Pod, Deployment, Service, ConfigMap, Secret, Namespace, Job and ObjectMeta are described in full
 * (schemas.ts), so `kubectl explain deployment.spec.replicas` prints a real description and type;
 * every other kind gets a permissive schema carrying its x-kubernetes-group-version-kind. Every
 * resource has a PATCH operation that lists the fieldValidation query parameter, so kubectl uses
 * server-side field validation instead of validating manifests against these schemas.
 */
import { sha256Hex } from './hash.ts';
import { SCHEMAS } from './schemas.ts';
import type { ResourceDef } from './types.ts';

type Schema = Record<string, any>;

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const OBJECT_META = `${META}ObjectMeta`;

const API_VERSION_DESC =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DESC =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const METADATA_DESC =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const FIELD_VALIDATION_DESC =
  'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.';

/** The OpenAPI schema name of a kind, like kube-apiserver names them (io.k8s.api.apps.v1.Deployment). */
export function schemaName(group: string, version: string, kind: string): string {
  if (group === '') return `io.k8s.api.core.v${version.slice(1)}.${kind}`;
  if (group === 'apiextensions.k8s.io')
    return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}.${kind}`;
  if (group === 'apiregistration.k8s.io')
    return `io.k8s.kube-aggregator.pkg.apis.apiregistration.${version}.${kind}`;
  if (group === 'internal.apiserver.k8s.io') return `io.k8s.api.apiserverinternal.${version}.${kind}`;
  if (group.endsWith('.k8s.io') || !group.includes('.')) {
    const short = group === 'rbac.authorization.k8s.io' ? 'rbac' : group.split('.')[0]!;
    return `io.k8s.api.${short}.${version}.${kind}`;
  }
  if (group === 'cluster.karmada.io')
    return `com.github.karmada-io.karmada.pkg.apis.cluster.${version}.${kind}`;
  // custom resources: the reversed group, like the apiextensions-apiserver publishes them
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

function permissiveKind(def: ResourceDef): Schema {
  const gv = def.group ? `${def.group}/${def.version}` : def.version;
  const props: Schema = {
    apiVersion: { description: API_VERSION_DESC, type: 'string' },
    kind: { description: KIND_DESC, type: 'string' },
    metadata: { description: METADATA_DESC, default: {}, allOf: [{ $ref: OBJECT_META }] },
    spec: {
      description: `Spec of the ${def.kind}.`,
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    },
    status: {
      description: `Most recently observed status of the ${def.kind}.`,
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    },
  };
  if (def.group === 'example.fleet.io' && def.kind === 'Widget') {
    props.spec = {
      description: 'WidgetSpec is the desired state of a Widget.',
      type: 'object',
      properties: {
        size: { description: 'How many parts the widget has.', type: 'integer', format: 'int64' },
        color: { description: 'The color of the widget.', type: 'string' },
      },
      'x-kubernetes-preserve-unknown-fields': true,
    };
  }
  return {
    description: `${def.kind} is served by this cluster as ${gv} ${def.resource}.`,
    type: 'object',
    properties: props,
    'x-kubernetes-preserve-unknown-fields': true,
  };
}

function kindSchema(def: ResourceDef): [string, Schema] {
  const name = schemaName(def.group, def.version, def.kind);
  const full = SCHEMAS[name];
  const base: Schema = full ? structuredClone(full) : permissiveKind(def);
  if (full && base.properties?.metadata && !base.properties.metadata.description) {
    base.properties.metadata = { description: METADATA_DESC, default: {}, ...base.properties.metadata };
  }
  base['x-kubernetes-group-version-kind'] = [{ group: def.group, kind: def.kind, version: def.version }];
  return [name, base];
}

/** Names of the schemas `schema` refers to (bare refs, as in SCHEMAS). */
function refsOf(schema: unknown, out: Set<string>): void {
  if (Array.isArray(schema)) for (const s of schema) refsOf(s, out);
  else if (schema && typeof schema === 'object') {
    for (const [k, v] of Object.entries(schema)) {
      if (k === '$ref' && typeof v === 'string') out.add(v);
      else refsOf(v, out);
    }
  }
}

/** Rewrites bare refs for a format: v3 keeps allOf wrappers, v2 inlines them as sibling $refs. */
function rewrite(schema: unknown, format: 'v2' | 'v3'): unknown {
  if (Array.isArray(schema)) return schema.map((s) => rewrite(s, format));
  if (!schema || typeof schema !== 'object') return schema;
  const src = schema as Schema;
  if (format === 'v2' && Array.isArray(src.allOf) && src.allOf.length === 1 && src.allOf[0].$ref) {
    const { allOf, default: _d, ...rest } = src;
    return { ...(rewrite(rest, format) as Schema), $ref: `#/definitions/${allOf[0].$ref}` };
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === '$ref' && typeof v === 'string') {
      out[k] = format === 'v3' ? `#/components/schemas/${v}` : `#/definitions/${v}`;
    } else out[k] = rewrite(v, format);
  }
  return out;
}

function resourcePath(def: ResourceDef): string {
  const prefix = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  return def.namespaced
    ? `${prefix}/namespaces/{namespace}/${def.resource}/{name}`
    : `${prefix}/${def.resource}/{name}`;
}

function operations(def: ResourceDef, format: 'v2' | 'v3', kindRef: string): Schema {
  const gvk = { group: def.group, version: def.version, kind: def.kind };
  const scope = def.namespaced ? 'Namespaced' : '';
  const param = (name: string, description: string) =>
    format === 'v3'
      ? { name, in: 'query', description, schema: { type: 'string', uniqueItems: true } }
      : { uniqueItems: true, type: 'string', description, name, in: 'query' };
  const response =
    format === 'v3'
      ? {
          description: 'OK',
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${kindRef}` } } },
        }
      : { description: 'OK', schema: { $ref: `#/definitions/${kindRef}` } };
  const ops: Schema = {};
  const gvTag = `${def.group ? def.group.split('.')[0] : 'core'}_${def.version}`;
  const opId = (verb: string) => `${verb}${scope}${def.kind}`;
  if (def.verbs.includes('get')) {
    ops.get = {
      tags: [gvTag],
      description: `read the specified ${def.kind}`,
      operationId: opId('read'),
      responses: { '200': response, '401': { description: 'Unauthorized' } },
      'x-kubernetes-action': 'get',
      'x-kubernetes-group-version-kind': gvk,
    };
  }
  if (def.verbs.includes('patch')) {
    ops.patch = {
      tags: [gvTag],
      description: `partially update the specified ${def.kind}`,
      operationId: opId('patch'),
      parameters: [
        param(
          'dryRun',
          'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed',
        ),
        param(
          'fieldManager',
          'fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch).',
        ),
        param('fieldValidation', FIELD_VALIDATION_DESC),
      ],
      responses: { '200': response, '201': response, '401': { description: 'Unauthorized' } },
      'x-kubernetes-action': 'patch',
      'x-kubernetes-group-version-kind': gvk,
    };
  }
  return ops;
}

function gvOf(path: string): [string, string] | undefined {
  const parts = path.replace(/^\/+|\/+$/g, '').split('/');
  if (parts[0] === 'api' && parts.length === 2) return ['', parts[1]!];
  if (parts[0] === 'apis' && parts.length === 3) return [parts[1]!, parts[2]!];
  return undefined;
}

export class OpenApi {
  private readonly docs = new Map<string, unknown>();
  private rootDoc: unknown;
  private v2Doc: unknown;

  constructor(private readonly resources: readonly ResourceDef[]) {}

  /** "api/v1", "apis/apps/v1", ... for every served group-version, plus the discovery paths. */
  paths(): string[] {
    const out = ['api', 'api/v1', 'apis'];
    const groups: string[] = [];
    for (const r of this.resources) {
      if (r.group === '') continue;
      if (!groups.includes(r.group)) {
        groups.push(r.group);
        out.push(`apis/${r.group}`);
      }
      const gv = `apis/${r.group}/${r.version}`;
      if (!out.includes(gv)) out.push(gv);
    }
    out.push('version');
    return out.sort();
  }

  private collect(defs: readonly ResourceDef[]): Map<string, Schema> {
    const schemas = new Map<string, Schema>();
    for (const d of defs) {
      const [name, s] = kindSchema(d);
      if (!schemas.has(name)) schemas.set(name, s);
    }
    const pending = new Set<string>();
    for (const s of schemas.values()) refsOf(s, pending);
    while (pending.size) {
      const [name] = pending;
      pending.delete(name!);
      if (schemas.has(name!)) continue;
      const s = SCHEMAS[name!];
      if (!s) throw new Error(`openapi: no schema ${name}`);
      schemas.set(name!, s);
      refsOf(s, pending);
    }
    return new Map([...schemas.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  }

  private build(path: string): unknown | undefined {
    const clean = path.replace(/^\/+|\/+$/g, '');
    if (!this.paths().includes(clean)) return undefined;
    const doc: Schema = {
      openapi: '3.0.0',
      info: { title: 'Kubernetes', version: 'unversioned' },
      paths: {},
      components: {
        schemas: {},
        securitySchemes: {
          BearerToken: {
            type: 'apiKey',
            description: 'Bearer Token authentication',
            name: 'authorization',
            in: 'header',
          },
        },
      },
    };
    const gv = gvOf(clean);
    if (!gv) return doc; // discovery and /version paths: no kinds
    const defs = this.resources.filter((r) => r.group === gv[0] && r.version === gv[1]);
    for (const d of [...defs].sort((a, b) => (a.resource < b.resource ? -1 : 1))) {
      doc.paths[resourcePath(d)] = operations(d, 'v3', schemaName(d.group, d.version, d.kind));
    }
    for (const [name, s] of this.collect(defs)) doc.components.schemas[name] = rewrite(s, 'v3');
    return doc;
  }

  private cached(path: string): unknown | undefined {
    const clean = path.replace(/^\/+|\/+$/g, '');
    if (!this.docs.has(clean)) {
      const doc = this.build(clean);
      if (doc === undefined) return undefined;
      this.docs.set(clean, doc);
    }
    return this.docs.get(clean);
  }

  v3(path: string): unknown | undefined {
    const doc = this.cached(path);
    return doc === undefined ? undefined : structuredClone(doc);
  }

  /** Upper-case hex SHA-256 of a v3 document's JSON: changes whenever the document does. */
  hash(path: string): string {
    return sha256Hex(JSON.stringify(this.cached(path))).toUpperCase();
  }

  root(): unknown {
    if (!this.rootDoc) {
      const paths: Record<string, { serverRelativeURL: string }> = {};
      for (const p of this.paths()) paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${this.hash(p)}` };
      this.rootDoc = { paths };
    }
    return structuredClone(this.rootDoc);
  }

  v2(): unknown {
    if (!this.v2Doc) {
      const paths: Schema = {};
      const defs = [...this.resources].sort((a, b) => (resourcePath(a) < resourcePath(b) ? -1 : 1));
      // the v2 document has one schema per kind: the preferred (first served) version wins paths too
      for (const d of defs) {
        const p = resourcePath(d);
        if (!paths[p]) paths[p] = operations(d, 'v2', schemaName(d.group, d.version, d.kind));
      }
      const definitions: Schema = {};
      for (const [name, s] of this.collect(this.resources)) definitions[name] = rewrite(s, 'v2');
      this.v2Doc = {
        swagger: '2.0',
        info: { title: 'Kubernetes', version: 'unversioned' },
        paths,
        definitions,
        securityDefinitions: {
          BearerToken: {
            description: 'Bearer Token authentication',
            type: 'apiKey',
            name: 'authorization',
            in: 'header',
          },
        },
        security: [{ BearerToken: [] }],
      };
    }
    return structuredClone(this.v2Doc);
  }
}
