/**
 * Request limits, checked before anything parses the request: URL length (414), header count and size
 * (431), body size (413, kube-apiserver's own 3 MiB by default). A body with Content-Length over the limit
 * is refused before it is read (and streams on untouched when within it); a chunked one is read up to the
 * limit, then refused, and what the client still sends is read away (bounded) so that it gets the 413
 * rather than a reset connection. Every refusal is a Kubernetes Status; nothing reaches a cluster.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { LimitsConfig } from '../../config/security.ts';
import { failure, statusResponse } from '../../kube/status.ts';

function tooLarge(max: number): Response {
  return statusResponse(failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${max}`));
}

/** Reads a body of unknown length up to `max` bytes: the bytes, or undefined when it is larger. */
async function readUpTo(
  c: Context,
  body: ReadableStream<Uint8Array>,
  max: number,
): Promise<Uint8Array | undefined> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      // read away what is still coming (up to 4× the limit), so the client is around to read the 413
      let rest = size;
      let ended = false;
      while (!ended && rest <= 4 * max) {
        const r = await reader.read().catch(() => ({ done: true, value: undefined }));
        ended = r.done;
        rest += r.value?.byteLength ?? 0;
      }
      // cancelling an ended body would close a connection that can carry the next request
      if (!ended) await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const ch of chunks) {
    out.set(ch, at);
    at += ch.byteLength;
  }
  // a new Request from its parts (Node's incoming-request adapter is no Request one can copy)
  const raw = c.req.raw;
  c.req.raw = new Request(raw.url, {
    method: raw.method,
    headers: raw.headers,
    body: out,
    signal: raw.signal,
  });
  return out;
}

export function limits(cfg: LimitsConfig): MiddlewareHandler {
  const max = cfg.maxBodyBytes;
  return async (c, next) => {
    const url = c.req.url;
    // path and query as the client sent them (the origin is ours)
    const at = url.indexOf('/', url.indexOf('//') + 2);
    const target = at < 0 ? 1 : url.length - at;
    if (target > cfg.maxUrlBytes)
      return statusResponse(
        failure(414, 'RequestURITooLong' as never, `request URI too long: limit is ${cfg.maxUrlBytes} bytes`),
      );
    let count = 0;
    let bytes = 0;
    c.req.raw.headers.forEach((v, k) => {
      count++;
      bytes += k.length + v.length + 4;
    });
    if (count > cfg.maxHeaderCount || bytes > cfg.maxHeaderBytes)
      return statusResponse(
        failure(
          431,
          'RequestHeaderFieldsTooLarge' as never,
          `request header fields too large: limits are ${cfg.maxHeaderCount} fields, ${cfg.maxHeaderBytes} bytes`,
        ),
      );
    // decided from the headers where possible: touching the body would start reading it
    const len = c.req.raw.headers.get('content-length');
    if (len !== null && !c.req.raw.headers.has('transfer-encoding')) {
      if (!/^\d+$/.test(len)) return statusResponse(failure(400, 'BadRequest', 'invalid Content-Length'));
      // the body streams on as it comes (passthrough relays it); the runtime enforces its length
      return Number(len) > max ? tooLarge(max) : next();
    }
    const body = c.req.raw.body;
    if (!body) return next();
    return (await readUpTo(c, body, max)) ? next() : tooLarge(max);
  };
}
