/**
 * Writes through the fleet view: create, update, patch, delete, deletecollection, and the writing
 * subresources (status, scale, eviction, binding, ephemeralcontainers, resize, proxy).
 *
 * Each write goes to exactly one cluster: create to the cluster its name or the clusterspace gives
 * (src/plan/write.ts `createTarget`), deletecollection to the one cluster of its clusterspace (405 across
 * the fleet), everything else to the owner of the URL's name (src/routes/locate.ts `findOwner`: one hit →
 * that one, several → 409 listing the fleet names). Bodies are rewritten for the cluster by
 * src/plan/body.ts (names, markers, composite RVs; JSON, YAML, the four patch types and protobuf); answers
 * come back in the fleet view (fleetAnswer). Bodies larger than kube-apiserver's 3 MiB limit are refused
 * with 413 before anything is sent anywhere.
 */
import type { Context } from 'hono';
import type { FleetConfig } from '../config/schema.ts';
import { negotiate } from '../kube/negotiate.ts';
import { type Status, statusResponse } from '../kube/status.ts';
import { decodeName, encodeName, isShortenedName } from '../merge/names/index.ts';
import { MAX_REQUEST_BODY_BYTES, type Rewritten, type WriteContext } from '../merge/writes.ts';
import {
  type Body,
  bodyForCluster,
  encodeBody,
  namesInBody,
  namespaceForCluster,
  parseObjectBody,
  parsePatchBody,
  tooLarge,
  unsupportedMediaType,
} from '../plan/body.ts';
import { askedNamespace } from '../plan/namespace.ts';
import { ownerQuery, withQuery } from '../plan/owner.ts';
import { answerView } from '../plan/view.ts';
import { createTarget, deleteCollectionTarget, selectorsForCluster } from '../plan/write.ts';
import { kubePathWithName, type RequestInfo } from '../request/info.ts';
import type { ClustersDeps, FanOutDeps } from '../types.ts';

/** What a write uses of the fleet: asking clusters, knowing which they are, the body limit. */
export type WriteDeps = FanOutDeps & ClustersDeps & { config: Pick<FleetConfig, 'federation' | 'limits'> };

import { readLimited } from '../request/body.ts';
import { fleetMembership, type Target } from '../upstreams/fanout.ts';
import { findOwner, forgetMissedName, undialed } from './locate.ts';
import { fleetAnswer } from './respond.ts';

/** subresources whose request and response bodies are not Kubernetes objects: relayed as they are */
const RAW_SUBRESOURCES = new Set(['proxy']);

export async function writeRoute(
  c: Context,
  deps: WriteDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  if (info.verb === 'deletecollection') return deleteCollection(c.req.raw, deps, info, targets);
  if (info.verb === 'create' && info.name === '')
    return create(c.req.raw, deps, info, targets, plainNameCluster);
  return namedWrite(c.req.raw, deps, info, targets, plainNameCluster);
}

// ---------------------------------------------------------------------------------------------- bodies

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
async function readLimitedBody(req: Request, limit = MAX_REQUEST_BODY_BYTES): Promise<Uint8Array | Status> {
  const declared = Number(req.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > limit) {
    await req.body?.cancel().catch(() => {});
    return tooLarge(limit);
  }
  const r = await readLimited(req.body, limit);
  return r.ok ? r.bytes : tooLarge(limit);
}

/** Reads and parses the request body (patch types for PATCH), or the Response that refuses it. */
async function readBody(
  req: Request,
  deps: { config: Pick<FleetConfig, 'limits'> },
  patch: boolean,
): Promise<Body | Response> {
  // configs built in code (tests, embedders) may leave the limits out
  const limit = deps.config.limits?.maxBodyBytes ?? MAX_REQUEST_BODY_BYTES;
  const bytes = await readLimitedBody(req, limit);
  if ('code' in bytes) return refuse(bytes);
  const type = req.headers.get('content-type');
  const body = patch ? parsePatchBody(bytes, type) : parseObjectBody(bytes, type);
  return 'code' in body ? statusResponse(body) : body;
}

/** The body as `ctx.cluster` must see it: names, markers, RVs, and a fleet-named namespace made plain. */
function forCluster(info: RequestInfo, body: Body, ctx: WriteContext): Rewritten<Body> {
  const out = bodyForCluster(info.verb, body, ctx);
  return out.ok ? namespaceForCluster(info.verb, out.value, ctx.cluster, info.namespace) : out;
}

/** Sends the rewritten body to the one cluster; JSON answers (the fleet rewrites them), no compression. */
async function sendBody(
  deps: Pick<FanOutDeps, 'client'>,
  req: Request,
  target: Target,
  method: string,
  path: string,
  accept: string,
  body: Body,
): Promise<Response> {
  const headers = new Headers(req.headers);
  headers.set('Accept', accept);
  headers.set('Accept-Encoding', 'identity');
  const payload = encodeBody(body, headers);
  const res = await deps.client.send(target.endpoint, {
    method,
    path,
    headers,
    body: payload ?? null,
    signal: req.signal,
  });
  // Karmada's cluster proxy that could not dial the member: the fleet's 503 naming it
  return undialed(target, res);
}

// ---------------------------------------------------------------------------------------------- verbs

async function create(
  req: Request,
  deps: WriteDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const neg = negotiate(req.headers.get('accept'), false);
  if ('code' in neg) return statusResponse(neg);
  const body = await readBody(req, deps, false);
  if (body instanceof Response) return body;
  const names = namesInBody(body);
  if ('code' in names) return statusResponse(names);
  const target = createTarget(info, names, targets, plainNameCluster);
  if ('code' in target) return statusResponse(target);
  if (body.kind === 'opaque') return statusResponse(unsupportedMediaType());

  const membership = await fleetMembership(deps, req.signal);
  const out = forCluster(info, body, { cluster: target.cluster, membership });
  if (!out.ok) return statusResponse(out.status);
  const path = info.kubePath + new URL(req.url).search;
  const res = await sendBody(deps, req, target, 'POST', path, neg.accept, out.value);
  // a shortened name looked up and found nowhere a moment ago exists now
  if (res.ok && names.name) {
    const shown = encodeName(decodeName(names.name).name, target.cluster);
    if (isShortenedName(shown)) forgetMissedName(shown);
  }
  return fleetAnswer(
    answerView(deps.config.federation, info, names.name),
    membership,
    target.cluster,
    decodeName(names.name).name,
    res,
    false,
    askedNamespace(info),
  );
}

async function namedWrite(
  req: Request,
  deps: WriteDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const raw = RAW_SUBRESOURCES.has(info.subresource);
  const neg = raw ? undefined : negotiate(req.headers.get('accept'), false);
  if (neg && 'code' in neg) return statusResponse(neg);
  // refuse what cannot be written before asking anyone
  const body = raw ? undefined : await readBody(req, deps, info.verb === 'patch');
  if (body instanceof Response) return body;

  const owner = await findOwner(deps, info, targets, plainNameCluster, req.signal);
  if ('code' in owner) return statusResponse(owner);
  const membership = await fleetMembership(deps, req.signal);
  const q = ownerQuery(new URL(req.url).searchParams, membership, owner.target.cluster);
  if ('code' in q) return statusResponse(q);
  const view = answerView(deps.config.federation, info, info.name);
  const path = withQuery(kubePathWithName(info, owner.plain), q);

  if (!body) {
    const res = await deps.client.send(owner.target.endpoint, {
      method: req.method,
      path,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
    });
    return fleetAnswer(
      view,
      membership,
      owner.target.cluster,
      owner.plain,
      await undialed(owner.target, res),
      true,
    );
  }
  const ctx = { cluster: owner.target.cluster, membership, url: { fleet: info.name, plain: owner.plain } };
  const out = forCluster(info, body, ctx);
  if (!out.ok) return statusResponse(out.status);
  const res = await sendBody(deps, req, owner.target, req.method, path, neg!.accept, out.value);
  return fleetAnswer(view, membership, owner.target.cluster, owner.plain, res, false, askedNamespace(info));
}

async function deleteCollection(
  req: Request,
  deps: WriteDeps,
  info: RequestInfo,
  targets: Target[],
): Promise<Response> {
  const target = deleteCollectionTarget(info, targets);
  if ('code' in target) return statusResponse(target);
  const neg = negotiate(req.headers.get('accept'), true);
  if ('code' in neg) return statusResponse(neg);
  const body = await readBody(req, deps, false);
  if (body instanceof Response) return body;

  const membership = await fleetMembership(deps, req.signal);
  const owned = ownerQuery(new URL(req.url).searchParams, membership, target.cluster);
  if ('code' in owned) return statusResponse(owned);
  // selectors in the fleet view: the cluster label and fleet names are the fleet's, not the cluster's
  const q = selectorsForCluster(owned, target.cluster);
  if ('code' in q) return statusResponse(q);
  const out = bodyForCluster(info.verb, body, { cluster: target.cluster, membership });
  if (!out.ok) return statusResponse(out.status);
  const res = await sendBody(deps, req, target, 'DELETE', withQuery(info.kubePath, q), neg.accept, out.value);
  // deletecollection answers with the deleted items: a list in the fleet view
  return fleetAnswer(
    answerView(deps.config.federation, info),
    membership,
    target.cluster,
    '',
    res,
    false,
    askedNamespace(info),
  );
}
