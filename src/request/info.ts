/**
 * The one request parser. Every path is parsed once, here, into a RequestInfo that everything downstream
 * reads (routing, planning, audit), the way kube-apiserver's RequestInfoFactory
 * (k8s.io/apiserver/pkg/endpoints/request/requestinfo.go) does it, extended with the fleet's clusterspace:
 *
 *   /clusterspaces/<cs>/<any kubernetes path>                           (prefix form, kubeconfig-friendly)
 *   /api/v1/namespaces/<ns>/clusterspaces/<cs>/<resource>[/<name>[/<sub>…]]   (in-path form, namespaced)
 *   /apis/<g>/<v>/clusterspaces/<cs>/<resource>[/<name>[/<sub>…]]             (in-path form, cluster scope
 *                                                                             or all namespaces)
 *
 * Pure: no I/O. Errors are typed so the caller answers with the right Status (never a guess).
 */

export type Verb =
  | 'get'
  | 'list'
  | 'watch'
  | 'create'
  | 'update'
  | 'patch'
  | 'delete'
  | 'deletecollection'
  | 'proxy'
  | 'connect';

export interface RequestInfo {
  /** path as received (still percent-encoded), without query */
  rawPath: string;
  /** clusterspace named in the URL (prefix or in-path form), or undefined for the vanilla API */
  clusterspace?: string;
  clusterspaceForm?: 'prefix' | 'inpath';
  /**
   * The Kubernetes path this request means, with the clusterspace removed (still percent-encoded):
   * what a single cluster would be asked.
   */
  kubePath: string;
  isResourceRequest: boolean;
  /** lowercased HTTP method for non-resource requests, the Kubernetes verb for resource requests */
  verb: string;
  apiPrefix?: 'api' | 'apis';
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** path segments after the subresource (pods/x/proxy/<more>) */
  extra: string[];
}

/**
 * A boolean query parameter as kube-apiserver reads it (apimachinery Convert_Slice_string_To_bool):
 * absent → false; "0" or "false" in any case → false; anything else, "True" as Python's client sends it
 * and even an empty value included → true.
 */
export function queryBool(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null) return false;
  return !(v === '0' || v.toLowerCase() === 'false');
}

export class RequestPathError extends Error {
  constructor(
    readonly code: 400 | 404,
    message: string,
  ) {
    super(message);
    this.name = 'RequestPathError';
  }
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const CLUSTERSPACES = 'clusterspaces';

/** Decodes one path segment; refuses what could change the path's shape after decoding. */
function decodeSegment(seg: string): string {
  let s: string;
  try {
    s = decodeURIComponent(seg);
  } catch {
    throw new RequestPathError(400, `invalid percent-encoding in path segment "${seg}"`);
  }
  if (s.includes('/'))
    throw new RequestPathError(400, 'percent-encoded "/" is not allowed in a path segment');
  if (s === '.' || s === '..') throw new RequestPathError(400, `path segment "${s}" is not allowed`);
  if (s.includes('\0')) throw new RequestPathError(400, 'NUL is not allowed in a path');
  return s;
}

/**
 * The segments of a path with no escape (no `%`), as {@link decodeSegment} would give them: each is its
 * own decoding, so only the refusals remain (dot segments, NUL; `/` cannot be inside one). Undefined
 * for an empty segment: the caller's slow path says why.
 */
function plainSegments(trimmed: string): string[] | undefined {
  if (trimmed.includes('//')) return undefined;
  const segs = trimmed.split('/');
  // in order, each segment's refusals as decodeSegment checks them
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    if (s.charCodeAt(0) === 46 && (s.length === 1 || (s.length === 2 && s.charCodeAt(1) === 46)))
      throw new RequestPathError(400, `path segment "${s}" is not allowed`);
    if (s.includes('\0')) throw new RequestPathError(400, 'NUL is not allowed in a path');
  }
  return segs;
}

/** The path without its leading and trailing slashes (`/^\/+/` and `/\/+$/` removed). */
function trimSlashes(rawPath: string): string {
  let start = 0;
  let end = rawPath.length;
  while (start < end && rawPath.charCodeAt(start) === 47) start++;
  while (end > start && rawPath.charCodeAt(end - 1) === 47) end--;
  return start === 0 && end === rawPath.length ? rawPath : rawPath.slice(start, end);
}

export interface SplitPath {
  readonly segs: readonly string[];
  readonly raw: readonly string[];
}

/** the last path split and its segments: a request's path is split by the raw-target check, then parsed */
let lastPath: string | undefined;
let lastSplit: SplitPath | undefined;

/**
 * The decoded segments of a raw (percent-encoded) path, with every refusal of {@link decodeSegment}.
 * Read only: the same result is handed out again for the same path.
 */
export function splitPath(rawPath: string): SplitPath {
  if (rawPath === lastPath) return lastSplit!;
  const split = splitOnce(rawPath);
  lastPath = rawPath;
  lastSplit = split;
  return split;
}

/**
 * kube-apiserver's answer for a path no handler claims (its notfoundhandler). A path that starts with
 * `//` (`GET //api/v1/pods`) is one: kube's director matches its API roots (`/api`, `/apis/…`) as path
 * prefixes without cleaning the path, so it reaches the not-found handler, never the pods.
 */
export const PATH_NOT_FOUND = 'the server could not find the requested resource';

function splitOnce(rawPath: string): SplitPath {
  if (!rawPath.startsWith('/')) throw new RequestPathError(400, 'path must be absolute');
  if (rawPath.charCodeAt(1) === 47) throw new RequestPathError(404, PATH_NOT_FOUND);
  const trimmed = trimSlashes(rawPath);
  if (trimmed === '') return { segs: [], raw: [] };
  // most paths carry no escape: their segments are their decodings (one array for both)
  if (!trimmed.includes('%')) {
    const segs = plainSegments(trimmed);
    if (segs) return { segs, raw: segs };
  }
  const raw = trimmed.split('/');
  if (raw.some((r) => r === '')) throw new RequestPathError(400, 'empty path segment ("//") is not allowed');
  return { segs: raw.map(decodeSegment), raw };
}

/** `/` and `raw[from…]` joined by `/`, but `raw[watchAt]` written `watch` and `raw[skip]`, `raw[skip + 1]` left out. */
function kubePathOf(raw: readonly string[], from: number, watchAt = -1, skip = -1): string {
  let s = '';
  for (let i = from; i < raw.length; i++) {
    if (i === skip) i++;
    else s += `/${i === watchAt ? 'watch' : raw[i]}`;
  }
  return s || '/';
}

const VERBS = new Map([
  ['POST', 'create'],
  ['PUT', 'update'],
  ['PATCH', 'patch'],
]);

/** The Kubernetes verb of a resource request. */
function resourceVerb(method: string, named: boolean, watchPath: boolean, query: URLSearchParams): string {
  const m = method === 'GET' ? method : method.toUpperCase();
  if (m === 'GET' || m === 'HEAD')
    return watchPath || queryBool(query, 'watch') ? 'watch' : named ? 'get' : 'list';
  if (m === 'DELETE') return named ? 'delete' : 'deletecollection';
  return VERBS.get(m) ?? m.toLowerCase();
}

/**
 * The request's RequestInfo. Read by index into the split path (no copy of its segments): the segments
 * after the API group and version are the "rest" kube reads resource, name and subresource from, less an
 * in-path clusterspace (two segments, `skip`) and, for `namespaces/<ns>/<resource>…`, the first two.
 */
export function parseRequestInfo(method: string, rawPath: string, query: URLSearchParams): RequestInfo {
  const { segs, raw } = splitPath(rawPath);
  let clusterspace: string | undefined;
  let clusterspaceForm: RequestInfo['clusterspaceForm'];
  let off = 0;
  if (segs[0] === CLUSTERSPACES) {
    if (segs.length < 2)
      throw new RequestPathError(
        404,
        'the path /clusterspaces needs a clusterspace: /clusterspaces/<cluster>/…',
      );
    clusterspace = segs[1];
    clusterspaceForm = 'prefix';
    off = 2;
  }
  const prefix = segs[off];
  const n = segs.length - off;
  const headLen = prefix === 'api' ? 2 : 3;
  if ((prefix !== 'api' && prefix !== 'apis') || n <= headLen) {
    const info: RequestInfo = {
      rawPath,
      clusterspace,
      clusterspaceForm,
      kubePath: kubePathOf(raw, off),
      isResourceRequest: false,
      verb: method.toLowerCase(),
      apiGroup: '',
      apiVersion: '',
      namespace: '',
      resource: '',
      subresource: '',
      name: '',
      extra: [],
    };
    if (prefix !== 'api' && prefix !== 'apis') return info;
    // /api/<v>/… and /apis/<g>/<v>/…: shorter paths are discovery documents, not resources
    info.apiPrefix = prefix;
    if (prefix === 'apis' && n >= 2) info.apiGroup = segs[off + 1]!;
    if (n === headLen) info.apiVersion = segs[off + headLen - 1]!;
    return info;
  }

  // the rest: segs[at…], less segs[skip] and segs[skip + 1] (an in-path clusterspace) when skip ≥ 0
  let at = off + headLen;
  // deprecated /watch/ path prefix: /api/v1/watch/pods
  const watchAt = segs[at] === 'watch' ? at : -1;
  if (watchAt >= 0) at++;
  const namespaced = segs[at] === 'namespaces';
  const namespace = namespaced ? (segs[at + 1] ?? '') : '';
  // …/clusterspaces/<cs>/<resource>…, first or after namespaces/<ns>: needs a resource after it
  let skip = namespaced ? at + 2 : at;
  if (segs[skip] !== CLUSTERSPACES || segs.length < skip + 3) skip = -1;
  else if (clusterspace !== undefined)
    throw new RequestPathError(400, 'a clusterspace is named twice (prefix and in-path); name it once');
  else {
    clusterspace = segs[skip + 1];
    clusterspaceForm = 'inpath';
  }
  const rest: string[] = [];
  for (let j = at; j < segs.length; j++)
    if (j === skip) j++;
    else rest.push(segs[j]!);
  // namespaces/<ns>/<resource>…: the namespace's own status and finalize are the Namespace's subresources
  const r = namespaced && rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!) ? 2 : 0;
  const kubePath = kubePathOf(raw, off, watchAt, skip);
  const resource = rest[r] ?? '';
  const name = rest[r + 1] ?? '';
  const subresource = rest[r + 2] ?? '';
  const extra = rest.slice(r + 3);
  if (resource === '') throw new RequestPathError(404, `no resource in path ${rawPath}`);

  return {
    rawPath,
    clusterspace,
    clusterspaceForm,
    kubePath,
    isResourceRequest: true,
    verb: resourceVerb(method, name !== '', watchAt >= 0, query),
    apiGroup: prefix === 'api' ? '' : segs[off + 1]!,
    apiVersion: segs[off + headLen - 1]!,
    namespace,
    resource,
    subresource,
    name,
    extra,
    apiPrefix: prefix,
  };
}

/**
 * The Kubernetes path of a resource request with another object name (plain name upstream instead of the
 * fleet name the client used), keeping subresource and trailing segments. Percent-encodes what it writes.
 */
export function kubePathWithName(info: RequestInfo, name: string): string {
  // a fleet name can decode to "." or ".." (`...clusterspace.<cluster>`): as a path segment it would walk
  // up the upstream URL, so it is refused like a dot segment in the path itself
  if (name === '.' || name === '..') throw new RequestPathError(400, `path segment "${name}" is not allowed`);
  const base =
    info.apiPrefix === 'api' ? `/api/${info.apiVersion}` : `/apis/${info.apiGroup}/${info.apiVersion}`;
  const e = encodeURIComponent;
  // a Namespace object is addressed as /api/v1/namespaces/<name>: its name is the namespace segment
  const ns = info.namespace && info.resource !== 'namespaces' ? `/namespaces/${e(info.namespace)}` : '';
  const sub = info.subresource ? `/${e(info.subresource)}` : '';
  const extra = info.extra.map((x) => `/${e(x)}`).join('');
  return `${base}${ns}/${e(info.resource)}/${e(name)}${sub}${extra}`;
}
