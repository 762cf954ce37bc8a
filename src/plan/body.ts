/**
 * Write bodies as the fleet reads and rewrites them: parsed by media type (JSON, YAML, protobuf, the four
 * patch types), rewritten for the one cluster that gets the write (names, markers, composite RVs: see
 * src/merge/writes.ts), and encoded again. Anything the fleet cannot read goes byte for byte and the
 * cluster decides. Pure: bytes in, bytes or a Status out.
 */

import {
  decodeEnvelope,
  encodeEnvelope,
  isProtobufBody,
  lenField,
  META_NAMESPACE,
  PROTOBUF_MEDIA_TYPE,
  readObjectMeta,
  rewriteMessage,
  WIRE_LEN,
} from '../kube/protobuf.ts';
import { badRequest, failure, type Status } from '../kube/status.ts';
import {
  deleteOptionsForCluster,
  jsonPatchForCluster,
  MAX_REQUEST_BODY_BYTES,
  mergePatchForCluster,
  objectForCluster,
  protobufObjectForCluster,
  type Rewritten,
  type WriteContext,
} from '../merge/writes.ts';
import { parseYaml } from '../util/yaml.ts';
import { bodyNamespace } from './namespace.ts';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_YAML = 'application/apply-patch+yaml';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export type Body =
  | { kind: 'json'; value: unknown; contentType: string }
  | { kind: 'protobuf'; bytes: Uint8Array }
  | { kind: 'empty' }
  | { kind: 'opaque'; bytes: Uint8Array; contentType: string };

function mediaType(header: string | null): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/** `Request entity too large: limit is 3145728`, as kube-apiserver's limitedReadBody answers. */
export function tooLarge(limit = MAX_REQUEST_BODY_BYTES): Status {
  return failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
}

/** 415 for an object body the fleet cannot read, naming the types it can. */
export function unsupportedMediaType(): Status {
  return failure(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, ${PROTOBUF_MEDIA_TYPE}`,
  );
}

/**
 * A UTF-8 byte order mark. kube-apiserver's JSON decoders (encoding/json underneath) refuse a body that
 * starts with one, in Go's words below; its YAML decoder (go-yaml) skips it. TextDecoder would drop it
 * silently, so JSON bodies are checked for it first; YAML bodies keep being read without it.
 */
function startsWithBom(bytes: Uint8Array): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}
const BOM_JSON_ERROR = "invalid character 'ï' looking for beginning of value";

/** Parses an object body (create, update, subresource writes, DeleteOptions): JSON, YAML or protobuf. */
export function parseObjectBody(bytes: Uint8Array, contentType: string | null): Body | Status {
  const mt = mediaType(contentType);
  if (bytes.length === 0) return { kind: 'empty' };
  if (mt === PROTOBUF_MEDIA_TYPE || (mt === '' && isProtobufBody(bytes))) return { kind: 'protobuf', bytes };
  if (mt === 'application/yaml') {
    try {
      return { kind: 'json', value: parseYaml(decoder.decode(bytes)), contentType: 'application/json' };
    } catch (e) {
      return badRequest(`error converting YAML to JSON: ${(e as Error).message}`);
    }
  }
  if (mt === '' || mt === 'application/json' || mt === '*/*') {
    if (startsWithBom(bytes))
      return badRequest(`couldn't get version/kind; json parse error: ${BOM_JSON_ERROR}`);
    try {
      return { kind: 'json', value: JSON.parse(decoder.decode(bytes)), contentType: 'application/json' };
    } catch (e) {
      return badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
    }
  }
  return { kind: 'opaque', bytes, contentType: contentType ?? '' };
}

/** Parses a PATCH body by its type; an unparsable patch is a 400 and is never forwarded. */
export function parsePatchBody(bytes: Uint8Array, contentType: string | null): Body | Status {
  const mt = mediaType(contentType);
  const text = decoder.decode(bytes);
  try {
    switch (mt) {
      case JSON_PATCH:
      case MERGE_PATCH:
      case STRATEGIC_PATCH:
        if (startsWithBom(bytes)) throw new Error(BOM_JSON_ERROR);
        return { kind: 'json', value: JSON.parse(text), contentType: mt };
      case APPLY_YAML:
        return { kind: 'json', value: parseYaml(text), contentType: APPLY_YAML };
    }
  } catch (e) {
    return badRequest(`the ${mt} patch could not be decoded: ${(e as Error).message}`);
  }
  // other patch types (apply-patch+cbor, unknown): the cluster decides, byte for byte
  return { kind: 'opaque', bytes, contentType: contentType ?? '' };
}

/** The name, generateName and namespace an object body gives (JSON or protobuf; '' when none). */
export function namesInBody(body: Body): { name: string; generateName: string; namespace: string } | Status {
  if (body.kind === 'json') {
    const md = (body.value as { metadata?: Record<string, unknown> } | null)?.metadata;
    const text = (v: unknown) => (typeof v === 'string' ? v : '');
    return { name: text(md?.name), generateName: text(md?.generateName), namespace: text(md?.namespace) };
  }
  if (body.kind === 'protobuf') {
    try {
      const meta = readObjectMeta(decodeEnvelope(body.bytes).raw);
      return {
        name: meta.name ?? '',
        generateName: meta.generateName ?? '',
        namespace: meta.namespace ?? '',
      };
    } catch (e) {
      return badRequest(`the protobuf body could not be decoded: ${(e as Error).message}`);
    }
  }
  return { name: '', generateName: '', namespace: '' };
}

/**
 * The body with a fleet-named `metadata.namespace` (`shop.clusterspace.member2`, as `kubectl -n` writes
 * it into what it sends) made plain for `cluster`, the one the write goes to (src/plan/namespace.ts
 * `bodyNamespace`: another cluster's is a 400). Objects (JSON, YAML, protobuf) and whole-object patches
 * (server-side apply, merge patches); JSON patches and DeleteOptions carry no namespace of their own.
 */
export function namespaceForCluster(
  verb: string,
  body: Body,
  cluster: string,
  urlNamespace: string,
): Rewritten<Body> {
  if (verb === 'delete' || verb === 'deletecollection') return { ok: true, value: body };
  if (body.kind === 'json' && body.contentType !== JSON_PATCH) {
    const md = (body.value as { metadata?: Record<string, unknown> } | null)?.metadata;
    if (!md || typeof md !== 'object' || typeof md.namespace !== 'string') return { ok: true, value: body };
    const ns = bodyNamespace(md.namespace, cluster, urlNamespace);
    if ('code' in ns) return { ok: false, status: ns };
    md.namespace = ns.namespace;
    return { ok: true, value: body };
  }
  if (body.kind !== 'protobuf') return { ok: true, value: body };
  try {
    const env = decodeEnvelope(body.bytes);
    const given = readObjectMeta(env.raw).namespace;
    if (!given) return { ok: true, value: body };
    const ns = bodyNamespace(given, cluster, urlNamespace);
    if ('code' in ns) return { ok: false, status: ns };
    if (ns.namespace === given) return { ok: true, value: body };
    // ObjectMeta is field 1 of every object, its namespace field 3 (meta/v1 generated.proto)
    const raw = rewriteMessage(env.raw, 0, env.raw.length, (f) =>
      f.num === 1 && f.wire === WIRE_LEN
        ? lenField(
            1,
            rewriteMessage(env.raw, f.valueStart, f.valueEnd, (m) =>
              m.num === META_NAMESPACE && m.wire === WIRE_LEN
                ? lenField(META_NAMESPACE, ns.namespace)
                : undefined,
            ),
          )
        : undefined,
    );
    return { ok: true, value: { kind: 'protobuf', bytes: encodeEnvelope(env.apiVersion, env.kind, raw) } };
  } catch (e) {
    return {
      ok: false,
      status: badRequest(`the protobuf body could not be decoded: ${(e as Error).message}`),
    };
  }
}

/** The body as the cluster must see it; `verb` is the Kubernetes verb (patch, delete, … rewrite differently). */
export function bodyForCluster(verb: string, body: Body, ctx: WriteContext): Rewritten<Body> {
  if (body.kind === 'empty' || body.kind === 'opaque') return { ok: true, value: body };
  const deleting = verb === 'delete' || verb === 'deletecollection';
  if (body.kind === 'protobuf') {
    // DeleteOptions as protobuf carry no names; only objects are rewritten
    if (deleting) return { ok: true, value: body };
    const r = protobufObjectForCluster(body.bytes, ctx);
    return r.ok ? { ok: true, value: { kind: 'protobuf', bytes: r.value } } : r;
  }
  let r: Rewritten<unknown>;
  if (verb === 'patch') {
    r =
      body.contentType === JSON_PATCH
        ? jsonPatchForCluster(body.value, ctx)
        : body.contentType === APPLY_YAML
          ? objectForCluster(body.value as Record<string, unknown>, ctx)
          : mergePatchForCluster(body.value, ctx);
  } else if (deleting) {
    r = deleteOptionsForCluster(body.value, ctx);
  } else {
    r = objectForCluster(body.value as Record<string, unknown>, ctx);
  }
  return r.ok ? { ok: true, value: { ...body, value: r.value } } : r;
}

/** The bytes to send (undefined: no body), setting the Content-Type they need on `headers`. */
export function encodeBody(body: Body, headers: Headers): Uint8Array | undefined {
  switch (body.kind) {
    case 'empty':
      headers.delete('content-type');
      return undefined;
    case 'protobuf':
      headers.set('Content-Type', PROTOBUF_MEDIA_TYPE);
      return body.bytes;
    case 'opaque':
      return body.bytes;
    case 'json':
      headers.set('Content-Type', body.contentType);
      return encoder.encode(JSON.stringify(body.value));
  }
}
