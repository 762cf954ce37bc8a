/**
 * `application/vnd.kubernetes.protobuf` in the simulated clusters, as kube-apiserver speaks it: request
 * bodies of every built-in kind (what kubectl 1.35 and client-go send), answers and watch streams for
 * clients that ask for protobuf first. The codec and the wire schema (Kubernetes 1.35's generated.proto)
 * are in proto/; this module turns their errors into kube's Statuses.
 */

import type { KubeObject } from './catalog/types.ts';
import { jsonResponse, StatusError, unsupportedMediaType } from './http.ts';
import { parseAccept } from './negotiate.ts';
import { ValueError, WireError } from './proto/codec.ts';
import {
  decodeEnvelope,
  decodeUnknown,
  encodeObject,
  encodeWatchFrame,
  messageOf,
  PROTOBUF,
  UnknownKindError,
} from './proto/envelope.ts';
import { badRequest, type Status, statusResponse } from './status.ts';

export { PROTOBUF };

/** Does kube serve this kind in protobuf (built-in kinds do; custom resources do not)? */
export function hasProtobuf(apiVersion: string, kind: string): boolean {
  return messageOf(apiVersion, kind) !== undefined;
}

/** apiserver's summarizeData: the first 30 bytes, as text for a JSON-looking body, else hex. */
function summarize(body: Uint8Array): string {
  if (body.length === 0) return '<empty>';
  const head = body.subarray(0, 30);
  const more = body.length > 30 ? ' ...' : '';
  if (body[0] === 0x7b) return new TextDecoder().decode(head) + more;
  return Array.from(head, (b) => b.toString(16).padStart(2, '0')).join('') + more;
}

/**
 * The object of a protobuf request body for a `kind` resource at `apiVersion`. Errors are kube's
 * (handlers/rest.go transformDecodeError): a body that is not an envelope is "unrecognized", one whose
 * envelope names a kind but whose message does not decode "cannot be handled as a <Kind>"; both 400.
 * A kind with no protobuf (a custom resource) is a 415, as its serializer list has none.
 */
export function readProtobufBody(body: Uint8Array, apiVersion: string, kind: string): KubeObject {
  if (!hasProtobuf(apiVersion, kind)) {
    throw new StatusError(unsupportedMediaType(['application/json', 'application/yaml']));
  }
  let u: ReturnType<typeof decodeEnvelope>;
  try {
    u = decodeEnvelope(body);
  } catch (e) {
    throw new StatusError(
      badRequest(
        `the object provided is unrecognized (must be of type ${kind}): ${(e as Error).message} (${summarize(body)})`,
      ),
    );
  }
  // copyKindDefaults: an envelope without apiVersion/kind takes the route's
  if (!u.apiVersion) u.apiVersion = apiVersion;
  if (!u.kind) u.kind = kind;
  const version = u.apiVersion.slice(u.apiVersion.indexOf('/') + 1);
  try {
    const obj = decodeUnknown(u) as KubeObject;
    if (typeof obj.metadata !== 'object' || obj.metadata === null) obj.metadata = {};
    return obj;
  } catch (e) {
    const why =
      e instanceof UnknownKindError
        ? `no kind "${u.kind}" is registered for version "${u.apiVersion}"`
        : (e as Error).message;
    if (e instanceof UnknownKindError || e instanceof WireError || e instanceof ValueError) {
      throw new StatusError(
        badRequest(`${u.kind} in version "${version}" cannot be handled as a ${kind}: ${why}`),
      );
    }
    throw e;
  }
}

/** The protobuf bytes of an object, list or Status; undefined when its kind has none or it does not fit the schema. */
export function encodeProtobuf(obj: unknown): Uint8Array<ArrayBuffer> | undefined {
  try {
    return encodeObject(obj as Record<string, unknown>);
  } catch (e) {
    if (e instanceof UnknownKindError || e instanceof ValueError) return undefined;
    throw e;
  }
}

/**
 * An answer in protobuf. An object the schema cannot carry (an extra field of the wrong type the
 * simulator's own store let through) is answered in JSON instead: client-go reads either by Content-Type.
 */
export function protobufResponse(obj: unknown, status = 200, fallback: () => Response): Response {
  const bytes = encodeProtobuf(obj);
  if (!bytes) return fallback();
  return new Response(bytes, {
    status,
    headers: { 'Content-Type': PROTOBUF, 'Cache-Control': 'no-cache, private' },
  });
}

export const PROTOBUF_WATCH = `${PROTOBUF};stream=watch`;

/** One length-delimited frame of a protobuf watch; undefined if the object does not encode (the caller sends JSON's ERROR instead). */
export function watchFrame(type: string, object: unknown): Uint8Array | undefined {
  try {
    return encodeWatchFrame(type, object as Record<string, unknown>);
  } catch (e) {
    if (e instanceof UnknownKindError || e instanceof ValueError) return undefined;
    throw e;
  }
}

/** Is the request body protobuf (Content-Type `application/vnd.kubernetes.protobuf`, parameters aside)? */
export function isProtobufBody(req: Request): boolean {
  const ct = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  return ct === PROTOBUF;
}

/**
 * The object of a protobuf request body for handlers outside resources.ts (the access reviews kubectl auth
 * can-i sends as protobuf); throws StatusError with kube's 400/415 as readProtobufBody does.
 */
export async function readProtobufRequest(
  req: Request,
  apiVersion: string,
  kind: string,
): Promise<KubeObject> {
  return readProtobufBody(new Uint8Array(await req.arrayBuffer()), apiVersion, kind);
}

/**
 * Does the client ask for protobuf before anything else JSON or YAML could answer (a wildcard, JSON or
 * YAML listed first means JSON)? client-go's typed clients send `application/vnd.kubernetes.protobuf, *\/*`.
 */
export function prefersProtobuf(accept: string | null): boolean {
  for (const r of parseAccept(accept)) {
    if (r.type === '*' || r.subtype === '*' || r.subtype === 'json' || r.subtype === 'yaml') return false;
    if (r.type === 'application' && r.subtype === 'vnd.kubernetes.protobuf') return true;
  }
  return false;
}

/**
 * An object answer (a review, a TokenRequest) in the encoding the client asked for first; JSON when it
 * asks for JSON or the object has no protobuf form.
 */
export function negotiatedAnswer(accept: string | null, obj: unknown, status = 200): Response {
  const json = () => jsonResponse(obj, status);
  return prefersProtobuf(accept) ? protobufResponse(obj, status, json) : json();
}

/**
 * An error Status in the encoding the client asked for first, as kube-apiserver's ErrorNegotiated writes it:
 * protobuf for a client that lists protobuf before JSON (client-go's typed clients), on endpoints whose kind
 * has protobuf (`protobuf`: false for custom resources and non-resource paths); JSON otherwise.
 */
export function statusAnswer(accept: string | null, status: Status, protobuf: boolean): Response {
  const json = () => statusResponse(status);
  if (!protobuf || !prefersProtobuf(accept)) return json();
  const bytes = encodeProtobuf(status);
  if (!bytes) return json();
  const headers: Record<string, string> = {
    'Content-Type': PROTOBUF,
    'Cache-Control': 'no-cache, private',
  };
  if (status.details?.retryAfterSeconds) headers['Retry-After'] = String(status.details.retryAfterSeconds);
  return new Response(bytes, { status: status.code, headers });
}
