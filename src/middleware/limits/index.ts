/**
 * Request limits, checked before anything parses the request, and the body's intake.
 *
 * `limits` (first in the chain, before authentication): the raw request target (dot segments and
 * encoded slashes, before any normalisation: src/request/target.ts), URL length (414), header count and
 * size (431), a declared body size (413, kube-apiserver's own 3 MiB by default). It never reads the body:
 * the body is only wrapped so that whoever reads it later gets at most the limit, within a deadline
 * (src/request/body.ts), chunked or not. So an unauthenticated client that starts an endless body holds
 * a socket, not memory.
 *
 * `bodyIntake` (after authentication): a body of unknown length (chunked) is read whole here, up to the
 * limit, so that an oversized one is refused with a 413 before any cluster sees the request (a streamed
 * passthrough would otherwise have started upstream); what the client still sends is read away
 * (bounded) so that it gets the 413 rather than a reset connection. Bodies with a Content-Length stream
 * on untouched (the runtime enforces their length), except JSON ones: those are read whole too, and one
 * nested deeper than MAX_BODY_DEPTH (src/kube/json.ts) is a 400 before any route, passthrough included,
 * relays it. Every refusal is a Kubernetes Status.
 */
import type { Context, Next } from 'hono';
import type { LimitsConfig } from '../../config/security.ts';
import { bytesNestDeeperThan, tooDeepMessage } from '../../kube/json.ts';
import { badRequest, failure, statusResponse } from '../../kube/status.ts';
import {
  BodyReadError,
  BodyTimeoutError,
  BodyTooLargeError,
  limitBody,
  readLimited,
} from '../../request/body.ts';
import { checkRawTarget, rawTargetOf } from '../../request/target.ts';
import type { FleetEnv } from '../../types.ts';
import { afterAnswer, answered, type Filter } from '../filter.ts';
import { lingering } from './linger.ts';

/**
 * How long a request body may take to arrive once reading starts. kubectl gives a whole request 32 s
 * (`?timeout=32s`) and kube-apiserver's default request timeout is 60 s; 3 MiB in 60 s is 50 KiB/s.
 */
export const BODY_TIMEOUT_MS = 60_000;

/** How long a refusal waits for the rest of a body nobody read (Workers: see linger.ts). */
const LINGER_MS = 2_000;

function tooLarge(max: number): Response {
  return statusResponse(failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${max}`));
}

function bodyTimeout(ms: number): Response {
  return statusResponse(
    failure(408, 'Timeout', `the request body was not received within ${Math.round(ms / 1000)}s`),
  );
}

/** Replaces the request's body, keeping everything else (Node's request adapter cannot be copied). */
function withBody(c: Context, body: ReadableStream<Uint8Array> | Uint8Array): void {
  const raw = c.req.raw;
  c.req.raw = new Request(raw.url, {
    method: raw.method,
    headers: raw.headers,
    body,
    signal: raw.signal,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
}

/** The request target as the client sent it: the runtime's raw one (Node), else the URL's path and query. */
function requestTarget(c: Context): string {
  const raw = rawTargetOf(c.env);
  if (raw !== undefined) return raw;
  const url = c.req.url;
  const at = url.indexOf('/', url.indexOf('//') + 2);
  return at < 0 ? '/' : url.slice(at);
}

export interface LimitsOptions {
  /** how long a body may take to arrive once reading starts */
  bodyTimeoutMs?: number;
  /**
   * true when {@link bodyIntake} runs after authentication and reads bodies of unknown length there;
   * false (the default, for a chain without it): they are read whole here, before authentication
   */
  intakeAfterAuthentication?: boolean;
}

export function limits(cfg: LimitsConfig, opts: LimitsOptions = {}): Filter {
  const max = cfg.maxBodyBytes;
  const bodyTimeoutMs = opts.bodyTimeoutMs ?? BODY_TIMEOUT_MS;
  const intake = opts.intakeAfterAuthentication ? undefined : bodyIntake(cfg, bodyTimeoutMs);
  /** a route that read the body and let the wrapper's error through: the refusal is this filter's own */
  const ownRefusal = (err: Error | undefined): Response | undefined => {
    if (err instanceof BodyTooLargeError) return tooLarge(max);
    if (err instanceof BodyReadError) return statusResponse(failure(400, 'BadRequest', err.message));
    if (err instanceof BodyTimeoutError) return bodyTimeout(bodyTimeoutMs);
    return undefined;
  };
  return (c, next) => {
    // Workers (no raw target from the runtime: Node's entry gives one, and Node's server lingers itself):
    // what a refused request still sends is read away before the refusal leaves (linger.ts), whichever
    // refusal it is: this filter's own (a declared length over the limit included) or a later one
    // (on Node the body is not even touched before it is needed: a touched one is no longer dumped by
    // Node's server after a refusal, and the client's upload then stalls)
    const linger = rawTargetOf(c.env) === undefined && c.req.raw.body ? lingering(c.req.raw.body) : undefined;
    const refuse = (res: Response): Response | Promise<Response> =>
      linger ? linger.drain(4 * max, LINGER_MS).then(() => res) : res;
    const target = requestTarget(c);
    if (target.length > cfg.maxUrlBytes)
      return refuse(
        statusResponse(
          failure(
            414,
            'RequestURITooLong' as never,
            `request URI too long: limit is ${cfg.maxUrlBytes} bytes`,
          ),
        ),
      );
    // throws RequestPathError (a 400 Status, via recovery) for dot segments and encoded slashes
    try {
      checkRawTarget(target);
    } catch (err) {
      if (!linger) throw err;
      return linger.drain(4 * max, LINGER_MS).then(() => {
        throw err;
      });
    }
    let count = 0;
    let bytes = 0;
    c.req.raw.headers.forEach((v, k) => {
      count++;
      bytes += k.length + v.length + 4;
    });
    if (count > cfg.maxHeaderCount || bytes > cfg.maxHeaderBytes)
      return refuse(
        statusResponse(
          failure(
            431,
            'RequestHeaderFieldsTooLarge' as never,
            `request header fields too large: limits are ${cfg.maxHeaderCount} fields, ${cfg.maxHeaderBytes} bytes`,
          ),
        ),
      );
    // decided from the headers where possible: touching the body would start reading it
    const headers = c.req.raw.headers;
    const len = headers.get('content-length');
    // both framings at once is the shape of request smuggling (RFC 9112 §6.1): Node's parser refuses
    // it, and so does the fleet wherever the runtime lets it through (workerd reads it as chunked)
    if (len !== null && headers.has('transfer-encoding'))
      return refuse(
        statusResponse(
          failure(400, 'BadRequest', 'a request may not carry both Content-Length and Transfer-Encoding'),
        ),
      );
    const declared = len !== null;
    if (declared) {
      if (!/^\d+$/.test(len))
        return refuse(statusResponse(failure(400, 'BadRequest', 'invalid Content-Length')));
      if (Number(len) > max) return refuse(tooLarge(max));
    }
    const body = linger?.stream ?? c.req.raw.body;
    // a declared length is the runtime's to enforce; the deadline holds for every body
    if (body)
      withBody(c, limitBody(body, { maxBytes: declared ? undefined : max, timeoutMs: bodyTimeoutMs }));
    return afterAnswer(c, intake ? answered(c, intake(c, next)) : next(), (res) => {
      const answer = ownRefusal(c.error) ?? res;
      return res.status >= 400 ? refuse(answer) : answer;
    });
  };
}

/** JSON and the JSON patch types (`application/merge-patch+json`, …): the bodies whose depth is checked. */
function isJsonMedia(contentType: string | null): boolean {
  const mt = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return mt === 'application/json' || (mt.startsWith('application/') && mt.endsWith('+json'));
}

/**
 * See the module comment: reads a body of unknown length whole, once the caller is known; a JSON body
 * (any length) too, so that its nesting depth is checked before any route relays it.
 */
export function bodyIntake(cfg: LimitsConfig, bodyTimeoutMs = BODY_TIMEOUT_MS): Filter {
  const max = cfg.maxBodyBytes;
  const read = async (c: Context<FleetEnv>, next: Next, body: ReadableStream<Uint8Array>, json: boolean) => {
    const raw = c.req.raw;
    const deadline = AbortSignal.timeout(bodyTimeoutMs);
    const r = await readLimited(body, max, {
      drainBytes: 4 * max,
      signal: AbortSignal.any([deadline, raw.signal]),
    }).catch((err: unknown) => {
      // the wrapper from `limits` fails the same way, whichever notices first
      if (err instanceof BodyTimeoutError) return { ok: false as const, reason: 'timeout' as const };
      if (err instanceof BodyReadError) return { ok: false as const, reason: 'unreadable' as const };
      throw err;
    });
    if (r.ok) {
      // a passthrough relays the bytes unparsed: nesting past the limit is refused here, before any
      // cluster sees it (kube's decoder stops at 10,000 levels; the fleet, which re-serialises, earlier)
      if (json && bytesNestDeeperThan(r.bytes)) return statusResponse(badRequest(tooDeepMessage()));
      withBody(c, r.bytes);
      return next();
    }
    if (r.reason === 'too-large') return tooLarge(max);
    if (r.reason === 'unreadable')
      return statusResponse(failure(400, 'BadRequest', 'the request body could not be read'));
    // the client went away (its signal): nobody reads this answer; the deadline: a 408
    return bodyTimeout(bodyTimeoutMs);
  };
  return (c, next) => {
    const raw = c.req.raw;
    const body = raw.body;
    if (!body) return next();
    const json = isJsonMedia(raw.headers.get('content-type'));
    if (!json && raw.headers.has('content-length') && !raw.headers.has('transfer-encoding')) return next();
    return read(c, next, body, json);
  };
}
