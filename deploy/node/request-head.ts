/**
 * What Go's net/http (in front of kube-apiserver) checks of a request head before any handler runs, done
 * once for every request the Node server takes, plain and upgrade alike: the Host lines, and a raw
 * backslash in the path.
 */
import type { IncomingMessage } from 'node:http';
import { hostRefusal } from '../../src/request/headers.ts';

/** Every Host line's value (Node's `headers.host` keeps only the first). */
function hostsOf(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'host') out.push(raw[i + 1]!);
  return out;
}

/**
 * The target with every backslash of its path written `%5C`. Go's net/http takes a raw backslash as a
 * byte of the path (kube then finds no such resource, or no object of that name); the WHATWG URL
 * @hono/node-server builds would turn it into `/` (another path), so the adapter refuses it with a
 * bodyless 400. Escaped, the path means what Go reads in it: the segment holds a backslash.
 */
function backslashesEscaped(target: string): string {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  if (!path.includes('\\')) return target;
  return path.replaceAll('\\', '%5C') + (q < 0 ? '' : target.slice(q));
}

/**
 * Go's 400 message for a missing, repeated or malformed Host; undefined when the head passes, and then
 * `req.url` has its backslashes escaped.
 */
export function refuseRequestHead(req: IncomingMessage): string | undefined {
  const refused = hostRefusal(hostsOf(req.rawHeaders), req.httpVersion === '1.1');
  if (refused) return refused;
  req.url = backslashesEscaped(req.url ?? '/');
  return undefined;
}
