/**
 * Parses the path once (src/request/info.ts) and puts the result on the context; every later step reads
 * it instead of looking at the URL again. Mounted under a prefix in another Hono app
 * (`outer.route('/k8s', fleet)`), the path parsed is the one below the prefix: `/k8s/api/v1/pods` is the
 * fleet's `/api/v1/pods`.
 */
import { basePath, baseRoutePath } from 'hono/route';
import { parseRequestInfo } from '../../request/info.ts';
import type { Filter } from '../filter.ts';

/**
 * A request URL whose path and query the WHATWG parser leaves exactly as written: characters it never
 * percent-encodes or rewrites (no space, quotes, `<>`, brackets, backtick, braces, backslash, `#`, nothing outside
 * ASCII) and no dot segment, plain or encoded (`.`, `..`, `%2e`). The Node adapter hands such URLs on
 * as they came (it runs `new URL` itself for anything else), so for them the parse can be skipped.
 */
const PLAIN = /^[A-Za-z0-9\-._~!$&()*+,;=:@/%?]*$/;
const DOT_SEGMENT = /\/(?:\.|%2e)/i;

/** `pathname` and `search` as `new URL(url)` gives them, without the parse for a plain URL. */
export function pathAndSearch(url: string): { pathname: string; search: string } {
  const at = url.indexOf('/', url.indexOf('//') + 2);
  if (at > 0) {
    const target = url.slice(at);
    if (PLAIN.test(target)) {
      const q = target.indexOf('?');
      const pathname = q < 0 ? target : target.slice(0, q);
      if (!DOT_SEGMENT.test(pathname))
        return { pathname, search: q < 0 || q === target.length - 1 ? '' : target.slice(q) };
    }
  }
  const u = new URL(url);
  return { pathname: u.pathname, search: u.search };
}

/** `pathname` below the app's mount prefix `base` (`/` when the app is not mounted). */
export function belowMount(pathname: string, base: string): string {
  if (base === '/' || base === '' || !pathname.startsWith(base)) return pathname;
  const rest = pathname.slice(base.length);
  return rest === '' ? '/' : rest;
}

/**
 * The filter, one per app: the mount prefix of a static mount (`/k8s`) is read from Hono once and kept
 * (asking for it costs a copy of the matched routes and a WeakMap entry per request); a prefix with
 * parameters (`/:tenant`) is read for each request.
 */
export function requestInfo(): Filter {
  let staticBase: string | undefined;
  return (c, next) => {
    const { pathname, search } = pathAndSearch(c.req.url);
    if (staticBase === undefined) {
      const route = baseRoutePath(c);
      if (!/[:*]/.test(route)) staticBase = route;
    }
    const path = belowMount(pathname, staticBase ?? basePath(c));
    c.set('info', parseRequestInfo(c.req.method, path, new URLSearchParams(search)));
    return next();
  };
}
