/**
 * Writes through the fleet view: create, update, patch, delete, deletecollection, and the writing
 * subresources (status, scale, eviction, binding, ephemeralcontainers, resize, proxy).
 *
 * Each write goes to exactly one cluster:
 * - create: the cluster of the fleet name in `metadata.name` (or `generateName`), else the URL's
 *   clusterspace, else (plain name, `all`) the control plane with federation on, and a 400 saying how to
 *   name the cluster with federation off;
 * - everything else: the owner of the URL's name (resolveOwner; plain names without a pinned cluster are
 *   looked up in every cluster: one hit → that one, several → 409 listing the fleet names);
 * - deletecollection: only with a clusterspace naming one cluster (in-path form, or `karmada`); across
 *   the fleet it is a 405.
 * Bodies are rewritten for the cluster by src/merge/writes.ts (names, markers, composite RVs; JSON, YAML,
 * the four patch types and protobuf); answers come back in the fleet view (fleetAnswer). Bodies larger
 * than kube-apiserver's 3 MiB limit are refused with 413 before anything is sent anywhere.
 */
import type { Context } from 'hono';
import { parse as parseYaml } from 'yaml';
import { negotiate } from '../kube/negotiate.ts';
import {
  CLUSTER_LABEL,
  rewriteFieldSelectorNames,
  SelectorError,
  splitClusterSelector,
} from '../kube/selectors.ts';
import { badRequest, failure, qualified, type Status, statusResponse } from '../kube/status.ts';
import { decodeName } from '../merge/names.ts';
import type { FleetView } from '../merge/objects.ts';
import { decodeEnvelope, isProtobufBody, PROTOBUF_MEDIA_TYPE, readObjectMeta } from '../merge/protobuf.ts';
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
import { kubePathWithName, type RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import { fanOut, fleetMembership, type Target } from '../upstreams/fanout.ts';
import { fleetAnswer, type Owner, ownerAmong, ownerQuery, resolveOwner } from './get.ts';

/** subresources whose request and response bodies are not Kubernetes objects: relayed as they are */
const RAW_SUBRESOURCES = new Set(['proxy']);

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const APPLY_YAML = 'application/apply-patch+yaml';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function mediaType(header: string | null): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/** `Request entity too large: limit is 3145728`, as kube-apiserver's limitedReadBody answers. */
export function tooLarge(limit = MAX_REQUEST_BODY_BYTES): Status {
  return failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
}

/**
 * Answers a Status; a 413 also closes the connection (the rest of the body is never read, so the
 * connection cannot carry another request, as Go's net/http does after MaxBytesReader).
 */
function refuse(s: Status): Response {
  return s.code === 413 ? statusResponse(s, { Connection: 'close' }) : statusResponse(s);
}

/**
 * The request body, at most `limit` bytes; a larger one is refused unread (Content-Length) or mid-read.
 * The limits middleware refuses oversized bodies first; this keeps the route safe on its own.
 */
export async function readLimitedBody(
  req: Request,
  limit = MAX_REQUEST_BODY_BYTES,
): Promise<Uint8Array | Status> {
  const declared = Number(req.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > limit) {
    await req.body?.cancel().catch(() => {});
    return tooLarge(limit);
  }
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    size += r.value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return tooLarge(limit);
    }
    chunks.push(r.value);
  }
  const out = new Uint8Array(size);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

function bodyLimit(deps: FleetDeps): number {
  return (
    (deps.config as { limits?: { maxBodyBytes?: number } }).limits?.maxBodyBytes ?? MAX_REQUEST_BODY_BYTES
  );
}

function jsonParseError(e: unknown): Status {
  return badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
}

type Body =
  | { kind: 'json'; value: unknown; contentType: string }
  | { kind: 'protobuf'; bytes: Uint8Array }
  | { kind: 'empty' }
  | { kind: 'opaque'; bytes: Uint8Array; contentType: string };

/** Parses an object body (create, update, subresource writes): JSON, YAML or protobuf. */
function parseObjectBody(bytes: Uint8Array, contentType: string | null): Body | Status {
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
    try {
      return { kind: 'json', value: JSON.parse(decoder.decode(bytes)), contentType: 'application/json' };
    } catch (e) {
      return jsonParseError(e);
    }
  }
  return { kind: 'opaque', bytes, contentType: contentType ?? '' };
}

/** Parses a PATCH body by its type; an unparsable patch is a 400 and is never forwarded. */
function parsePatchBody(bytes: Uint8Array, contentType: string | null): Body | Status {
  const mt = mediaType(contentType);
  const text = decoder.decode(bytes);
  try {
    switch (mt) {
      case JSON_PATCH:
      case MERGE_PATCH:
      case STRATEGIC_PATCH:
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

/** The body as the cluster must see it. */
function bodyForCluster(info: RequestInfo, body: Body, ctx: WriteContext): Rewritten<Body> {
  if (body.kind === 'empty' || body.kind === 'opaque') return { ok: true, value: body };
  if (body.kind === 'protobuf') {
    // DeleteOptions as protobuf carry no names; only objects are rewritten
    if (info.verb === 'delete' || info.verb === 'deletecollection') return { ok: true, value: body };
    const r = protobufObjectForCluster(body.bytes, ctx);
    return r.ok ? { ok: true, value: { kind: 'protobuf', bytes: r.value } } : r;
  }
  let r: Rewritten<unknown>;
  if (info.verb === 'patch') {
    r =
      body.contentType === JSON_PATCH
        ? jsonPatchForCluster(body.value, ctx)
        : body.contentType === APPLY_YAML
          ? objectForCluster(body.value as Record<string, unknown>, ctx)
          : mergePatchForCluster(body.value, ctx);
  } else if (info.verb === 'delete' || info.verb === 'deletecollection') {
    r = deleteOptionsForCluster(body.value, ctx);
  } else {
    r = objectForCluster(body.value as Record<string, unknown>, ctx);
  }
  return r.ok ? { ok: true, value: { ...body, value: r.value } } : r;
}

function encodeBody(body: Body, headers: Headers): Uint8Array | undefined {
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

function qs(p: URLSearchParams): string {
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Upstream headers for a rewritten write: JSON answers (the fleet rewrites them), no compression. */
function upstreamHeaders(req: Request, accept: string): Headers {
  const h = new Headers(req.headers);
  h.set('Accept', accept);
  h.set('Accept-Encoding', 'identity');
  return h;
}

export async function writeRoute(
  c: Context,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  if (info.verb === 'deletecollection') return deleteCollection(c, deps, info, targets);
  if (info.verb === 'create' && info.name === '') return create(c, deps, info, targets, plainNameCluster);
  return namedWrite(c, deps, info, targets, plainNameCluster);
}

// ---------------------------------------------------------------------------------------------- create

function nameTheCluster(info: RequestInfo, name: string, generate: boolean, targets: Target[]): Status {
  const clusters = targets.map((t) => t.cluster).join(', ');
  const what = generate ? `generateName "${name}"` : `the name "${name}"`;
  const example = generate ? `${name}.clusterspace.<cluster>` : `${name || '<name>'}.clusterspace.<cluster>`;
  return badRequest(
    `${what} does not say which cluster to create the ${qualified(info.resource, info.apiGroup)} in (federation is off): ` +
      `set metadata.${generate ? 'generateName' : 'name'} to "${example}" (clusters: ${clusters}), ` +
      `or create it through /clusterspaces/<cluster>/… or …/clusterspaces/<cluster>/${info.resource}`,
  );
}

async function create(
  c: Context,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const req = c.req.raw;
  const neg = negotiate(req.headers.get('accept'), false);
  if ('code' in neg) return statusResponse(neg);
  const bytes = await readLimitedBody(req, bodyLimit(deps));
  if ('code' in bytes) return refuse(bytes);
  const body = parseObjectBody(bytes, req.headers.get('content-type'));
  if ('code' in body) return statusResponse(body);

  // the name the client gave, and the cluster it names
  let name = '';
  let generateName = '';
  if (body.kind === 'json') {
    const md = (body.value as { metadata?: { name?: unknown; generateName?: unknown } } | null)?.metadata;
    if (typeof md?.name === 'string') name = md.name;
    if (typeof md?.generateName === 'string') generateName = md.generateName;
  } else if (body.kind === 'protobuf') {
    try {
      const meta = readObjectMeta(decodeEnvelope(body.bytes).raw);
      name = meta.name ?? '';
      generateName = meta.generateName ?? '';
    } catch (e) {
      return statusResponse(badRequest(`the protobuf body could not be decoded: ${(e as Error).message}`));
    }
  }
  const given = name || generateName;
  const named = decodeName(given).cluster;
  const cs = info.clusterspace ?? 'all';
  const csCluster = cs !== 'all' ? targets[0]?.cluster : undefined;
  let target: Target | undefined;
  if (named !== undefined) {
    if (csCluster !== undefined && named !== csCluster)
      return statusResponse(
        badRequest(
          `the name "${given}" names cluster "${named}", which contradicts the clusterspace "${cs}"`,
        ),
      );
    target = targets.find((t) => t.cluster === named);
    if (!target)
      return statusResponse(
        badRequest(
          `the name "${given}" names cluster "${named}", which is not in the fleet (clusters: ${targets.map((t) => t.cluster).join(', ')})`,
        ),
      );
  } else {
    const cluster = csCluster ?? plainNameCluster;
    target = cluster === undefined ? undefined : targets.find((t) => t.cluster === cluster);
    if (!target) return statusResponse(nameTheCluster(info, given, !name && !!generateName, targets));
  }
  if (body.kind === 'opaque')
    return statusResponse(
      failure(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, ${PROTOBUF_MEDIA_TYPE}`,
      ),
    );

  const membership = await fleetMembership(deps, req.signal);
  const ctx: WriteContext = { cluster: target.cluster, membership };
  const out = bodyForCluster(info, body, ctx);
  if (!out.ok) return statusResponse(out.status);
  const headers = upstreamHeaders(req, neg.accept);
  const payload = encodeBody(out.value, headers);
  const res = await deps.client.send(target.endpoint, {
    method: 'POST',
    path: info.kubePath + new URL(req.url).search,
    headers,
    body: payload ?? null,
    signal: req.signal,
  });
  const view: FleetView = { federation: deps.config.federation };
  return fleetAnswer(view, membership, target.cluster, decodeName(name).name, res);
}

// ---------------------------------------------------------------------------------------------- named

/**
 * Federation off and a plain name in `all`: the owner is whichever cluster has an object of that name.
 * One → that cluster; none → 404; several → 409 listing the fleet names to use.
 */
export async function locateOwner(
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plain: string,
  signal: AbortSignal,
): Promise<Owner | Status> {
  const probe = { ...info, subresource: '', extra: [] };
  const outcomes = await fanOut(deps, targets, () => ({
    method: 'GET',
    path: kubePathWithName(probe, plain),
    headers: new Headers({
      Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
      'Accept-Encoding': 'identity',
    }),
    signal,
  }));
  await Promise.all(outcomes.map((o) => (o.ok ? o.res.body?.cancel() : undefined)));
  return ownerAmong(
    deps,
    info,
    plain,
    outcomes.filter((o) => o.ok && o.res.ok).map((o) => o.target),
    outcomes.filter((o) => !o.ok).map((o) => o.target.cluster),
  );
}

async function namedWrite(
  c: Context,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const req = c.req.raw;
  const url = new URL(req.url);
  const raw = RAW_SUBRESOURCES.has(info.subresource);
  const neg = raw ? undefined : negotiate(req.headers.get('accept'), false);
  if (neg && 'code' in neg) return statusResponse(neg);

  let body: Body | undefined;
  if (!raw) {
    // refuse what cannot be written before asking anyone
    const bytes = await readLimitedBody(req, bodyLimit(deps));
    if ('code' in bytes) return refuse(bytes);
    const parsed =
      info.verb === 'patch'
        ? parsePatchBody(bytes, req.headers.get('content-type'))
        : parseObjectBody(bytes, req.headers.get('content-type'));
    if ('code' in parsed) return statusResponse(parsed);
    body = parsed;
  }

  const resolved = await resolveOwner(deps, info, targets, plainNameCluster);
  if ('code' in resolved) return statusResponse(resolved);
  const owner =
    'search' in resolved ? await locateOwner(deps, info, targets, resolved.plain, req.signal) : resolved;
  if ('code' in owner) return statusResponse(owner);

  const membership = await fleetMembership(deps, req.signal);
  const q = ownerQuery(url, membership, owner.target.cluster);
  if ('code' in q) return statusResponse(q);
  const view: FleetView = { federation: deps.config.federation };
  const path = kubePathWithName(info, owner.plain) + qs(q);

  if (raw) {
    const res = await deps.client.send(owner.target.endpoint, {
      method: req.method,
      path,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
    });
    return fleetAnswer(view, membership, owner.target.cluster, owner.plain, res, true);
  }

  const ctx: WriteContext = {
    cluster: owner.target.cluster,
    membership,
    url: { fleet: info.name, plain: owner.plain },
  };
  const out = bodyForCluster(info, body!, ctx);
  if (!out.ok) return statusResponse(out.status);
  const headers = upstreamHeaders(req, neg!.accept);
  const payload = encodeBody(out.value, headers);
  const res = await deps.client.send(owner.target.endpoint, {
    method: req.method,
    path,
    headers,
    body: payload ?? null,
    signal: req.signal,
  });
  return fleetAnswer(view, membership, owner.target.cluster, owner.plain, res);
}

// ---------------------------------------------------------------------------------------------- deletecollection

async function deleteCollection(
  c: Context,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
): Promise<Response> {
  const req = c.req.raw;
  const cs = info.clusterspace ?? 'all';
  if (cs === 'all' || targets.length !== 1)
    return statusResponse(
      failure(
        405,
        'MethodNotAllowed',
        `deletecollection is not supported on resources of kind "${qualified(info.resource, info.apiGroup)}" across the fleet; ` +
          `address one cluster: /clusterspaces/<cluster>/… or …/clusterspaces/<cluster>/${info.resource}`,
        { ...(info.apiGroup ? { group: info.apiGroup } : {}), kind: info.resource },
      ),
    );
  const target = targets[0]!;
  const neg = negotiate(req.headers.get('accept'), true);
  if ('code' in neg) return statusResponse(neg);
  const bytes = await readLimitedBody(req, bodyLimit(deps));
  if ('code' in bytes) return refuse(bytes);
  const body = parseObjectBody(bytes, req.headers.get('content-type'));
  if ('code' in body) return statusResponse(body);

  const membership = await fleetMembership(deps, req.signal);
  const url = new URL(req.url);
  const q = ownerQuery(url, membership, target.cluster);
  if ('code' in q) return statusResponse(q);
  // selectors in the fleet view: the cluster label and fleet names are the fleet's, not the cluster's
  try {
    const split = splitClusterSelector(q.get('labelSelector'), [target.cluster]);
    const names = rewriteFieldSelectorNames(q.get('fieldSelector'), { plainNameCluster: target.cluster });
    const nothing =
      split.clusters.length === 0 ||
      names.matchesNothing ||
      (names.cluster !== undefined && names.cluster !== target.cluster);
    if (nothing) q.set('labelSelector', `${CLUSTER_LABEL},!${CLUSTER_LABEL}`);
    else if (split.forward) q.set('labelSelector', split.forward);
    else q.delete('labelSelector');
    const field = names.matchesNothing ? '' : names.forwardFor(target.cluster);
    if (field) q.set('fieldSelector', field);
    else q.delete('fieldSelector');
  } catch (e) {
    if (e instanceof SelectorError) return statusResponse(e.status);
    throw e;
  }
  const out = bodyForCluster(info, body, { cluster: target.cluster, membership });
  if (!out.ok) return statusResponse(out.status);
  const headers = upstreamHeaders(req, neg.accept);
  const payload = encodeBody(out.value, headers);
  const res = await deps.client.send(target.endpoint, {
    method: 'DELETE',
    path: info.kubePath + qs(q),
    headers,
    body: payload ?? null,
    signal: req.signal,
  });
  // deletecollection answers with the deleted items: a list in the fleet view
  return fleetAnswer({ federation: deps.config.federation }, membership, target.cluster, '', res);
}
