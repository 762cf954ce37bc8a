/**
 * Parse a resource path once, the way kube-apiserver's RequestInfoFactory does, so every handler reads
 * the same parsed result.
 */

/**
 * A boolean query parameter as apimachinery's conversion (Convert_Slice_string_To_bool) reads it: absent is
 * false; `0` and any case of `false` are false; anything else, the empty string included, is true.
 */
export function queryBool(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null) return false;
  return !(v === '0' || v.toLowerCase() === 'false');
}

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceInfo {
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  verb: Verb;
}

/** Subresources of a namespace: `/api/v1/namespaces/x/status` is namespace x's status, not resource `status` in x. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** undefined → not a resource path (discovery or something unregistered). */
export function parseResourcePath(
  pathname: string,
  method: string,
  query: URLSearchParams,
): ResourceInfo | undefined {
  const parts = pathname
    .split('/')
    .filter((p) => p !== '')
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    version = parts[1]!;
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
    else namespace = undefined; // the namespaces resource itself: name = rest[1]
  }
  const [resource, name, subresource, ...extra] = rest;
  if (!resource || extra.length > 0) return undefined;
  const watch = legacyWatch || queryBool(query, 'watch');
  let verb: Verb;
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = name !== undefined ? (watch ? 'watch' : 'get') : watch ? 'watch' : 'list';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name !== undefined ? 'delete' : 'deletecollection';
      break;
    default:
      verb = 'get';
  }
  const info: ResourceInfo = { group, version, resource, verb };
  if (namespace !== undefined) info.namespace = namespace;
  if (name !== undefined) info.name = name;
  if (subresource !== undefined) info.subresource = subresource;
  return info;
}
