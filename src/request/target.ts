/**
 * The raw request target, checked before anything normalises it. The README promises that dot segments
 * (`..`, `.`, and their encoded forms `%2e%2e`, `.%2e`, `%2E`) and encoded slashes (`%2f`) are refused;
 * a runtime that resolves them first would route `/clusterspaces/member2/../member1/…` to member1
 * while the client, a policy or an audit reader sees member2 in the URL. So the runtime entry hands the
 * target over as the client sent it (Node: `IncomingMessage.url`, under {@link RAW_TARGET} in the env),
 * and the same segment rules as the parser (src/request/info.ts) run on it.
 *
 * Where the runtime hands over only a normalised URL (workerd resolves dot segments before the worker
 * runs), the check sees what is left: encoded slashes are still refused, resolved dot segments are gone.
 */
import { RequestPathError, splitPath } from './info.ts';

/** The env key under which a runtime entry puts the raw request target (path and query as sent). */
export const RAW_TARGET = 'fleetRawTarget';

export function rawTargetOf(env: unknown): string | undefined {
  const t = (env as Record<string, unknown> | undefined)?.[RAW_TARGET];
  return typeof t === 'string' ? t : undefined;
}

/** The path of a request target: origin-form (`/p?q`) or absolute-form (`http://host/p?q`, proxies). */
export function targetPath(target: string): string {
  let t = target;
  if (!t.startsWith('/')) {
    // absolute-form: the path starts at the first "/" after the authority ("*" and the like have none)
    const at = t.indexOf('//');
    const slash = at < 0 ? -1 : t.indexOf('/', at + 2);
    t = slash < 0 ? '/' : t.slice(slash);
  }
  const end = t.search(/[?#]/);
  return end < 0 ? t : t.slice(0, end);
}

/**
 * Throws a RequestPathError (400) when the target's path holds a dot segment, an encoded slash, NUL, a
 * bad escape or an empty segment: the refusals of the one parser, applied before normalisation.
 */
export function checkRawTarget(target: string): void {
  const path = targetPath(target);
  if (!path.startsWith('/')) throw new RequestPathError(400, 'the request target must be an absolute path');
  splitPath(path);
}
