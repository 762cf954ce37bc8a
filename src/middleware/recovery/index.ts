/**
 * Last line of defence, like kube-apiserver's WithPanicRecovery: anything thrown below becomes a
 * Kubernetes Status. Known failures map to their own code; anything else is a 500 InternalError whose
 * body says nothing about the fleet's internals (the stack goes to the log, never to the client).
 */
import type { ErrorHandler } from 'hono';
import { ConfigError } from '../../config/schema.ts';
import {
  badRequest,
  CLIENT_CLOSED_REQUEST,
  failure,
  gatewayTimeout,
  internalError,
  serviceUnavailable,
  statusResponse,
} from '../../kube/status.ts';
import { BodyReadError, BodyTimeoutError, BodyTooLargeError } from '../../request/body.ts';
import { RequestPathError } from '../../request/info.ts';
import { UpstreamError } from '../../upstreams/client.ts';
import { MembershipError } from '../../upstreams/membership.ts';
import { TooManyClustersError } from '../../upstreams/relay/plan.ts';

/**
 * A request its client abandoned (an upstream call aborted with it): nothing went wrong on our side.
 * Transports report an abort as the Web-standard AbortError (src/platform/node.ts maps undici's own);
 * whatever awaited the request's signal itself rejects with the signal's reason, which the runtime chose:
 * @hono/node-server aborts with the text "Client connection prematurely closed." (or the socket's error
 * as text), and its body reader throws that text as an Error.
 */
function isClientGone(err: unknown, signal?: AbortSignal): boolean {
  if (!signal?.aborted) return false;
  if ((err as { name?: string })?.name === 'AbortError' || err === signal.reason) return true;
  return err instanceof Error && typeof signal.reason === 'string' && err.message === signal.reason;
}

export function errorToResponse(err: unknown, signal?: AbortSignal): Response {
  // kube logs nothing for a client that left mid-request either; the answer goes nowhere (499, nginx's
  // "client closed request", for any access log in between)
  if (isClientGone(err, signal)) return new Response(null, { status: CLIENT_CLOSED_REQUEST });
  if (err instanceof RequestPathError)
    return statusResponse(err.code === 404 ? failure(404, 'NotFound', err.message) : badRequest(err.message));
  // a body read by a route after the limits middleware wrapped it (src/request/body.ts)
  if (err instanceof BodyTooLargeError)
    return statusResponse(failure(413, 'RequestEntityTooLarge', err.message));
  if (err instanceof BodyTimeoutError) return statusResponse(failure(408, 'Timeout', err.message));
  if (err instanceof BodyReadError) return statusResponse(badRequest(err.message));
  if (err instanceof UpstreamError)
    return statusResponse(
      err.kind === 'timeout' ? gatewayTimeout(err.message) : serviceUnavailable(err.message),
    );
  if (err instanceof MembershipError) return statusResponse(serviceUnavailable(err.message, 1));
  // no Retry-After: asking again spans as many clusters
  if (err instanceof TooManyClustersError) return statusResponse(serviceUnavailable(err.message));
  if (err instanceof ConfigError) return statusResponse(serviceUnavailable(err.message));
  console.error('fleet: unhandled error', err);
  return statusResponse(internalError('the fleet-apiserver failed to handle this request'));
}

export const recovery: ErrorHandler = (err, c) => errorToResponse(err, c.req.raw.signal);
