/**
 * What a request answers when no cluster of the clusterspace served it (a list or get that found no
 * cluster with the resource): kube's 404 only when every cluster answered that it does not serve the
 * resource. When some could not be asked (no answer at all, a timeout, or a server error: Karmada's
 * cluster proxy answers a member it cannot dial with a 500), the resource may be theirs alone: a 404
 * would tell the client it does not exist, so the answer is a 503 naming them, in the words client-go
 * uses for a 503 ("the server is currently unable to handle the request"), as kube-apiserver answers for
 * an APIService it cannot reach (KEP-4020: an unavailable server's resources are a 503, not a 404).
 * A cluster's own refusal (403 for the caller, 410, 400…) is that refusal. Pure: no I/O.
 */
import { failure, type Status } from '../kube/status.ts';

/** One cluster's answer to a request nobody served. */
export type UnservedAnswer =
  | { cluster: string; kind: 'notServed' }
  | { cluster: string; kind: 'failed'; reason: string; status?: Status | undefined };

/** a failure that is no answer from the cluster itself: transport, timeout, proxy or server error */
export function isUnreachable(a: Extract<UnservedAnswer, { kind: 'failed' }>): boolean {
  return a.status === undefined || a.status.code >= 500;
}

/** The message of the 503 for `down` (clusters with their reasons). */
export function unavailableMessage(down: ReadonlyArray<{ cluster: string; reason: string }>): string {
  const why = down.map((d) => `cluster ${d.cluster}: ${d.reason}`).join('; ');
  return `the server is currently unable to handle the request (no reachable cluster serves it; ${why})`;
}

/**
 * The Status for a request no cluster served (`answers` in fleet order, at least one). A refusal by a
 * cluster comes first (the first one, as that cluster gave it); then a 503 when any cluster could not be
 * asked; a 404 when every cluster said it does not serve the resource.
 */
export function unservedStatus(answers: readonly UnservedAnswer[]): Status {
  const failed = answers.filter((a): a is Extract<UnservedAnswer, { kind: 'failed' }> => a.kind === 'failed');
  const refusal = failed.find((a) => !isUnreachable(a));
  if (refusal?.status) return refusal.status;
  const down = failed.filter(isUnreachable);
  if (down.length > 0) return failure(503, 'ServiceUnavailable', unavailableMessage(down));
  return failure(404, 'NotFound', 'the server could not find the requested resource');
}

/** One cluster's non-2xx answer (`status`: its Status body, if any) as an {@link UnservedAnswer}. */
export function answerOf(cluster: string, httpStatus: number, status: Status | undefined): UnservedAnswer {
  // kube's 404 for a resource it does not serve names no object (an object's 404 does)
  if (httpStatus === 404 && !status?.details?.name) return { cluster, kind: 'notServed' };
  const reason = status?.message ?? `HTTP ${httpStatus}`;
  // without a Status (a proxy's page), or with a 5xx one: no answer of the cluster's own (unreachable)
  return { cluster, kind: 'failed', reason, status };
}

/**
 * A plain name looked up in every cluster and found nowhere: a 503 when no reachable cluster serves the
 * resource at all and some could not be asked (the object may be theirs, and the resource theirs alone);
 * undefined otherwise (the owner rules of src/plan/owner.ts answer: NotFound, naming the clusters that
 * could not be asked).
 */
export function unservedLookup(answers: readonly UnservedAnswer[]): Status | undefined {
  const down = answers.filter(
    (a): a is Extract<UnservedAnswer, { kind: 'failed' }> => a.kind === 'failed' && isUnreachable(a),
  );
  if (down.length === 0) return undefined;
  if (!answers.every((a) => a.kind === 'notServed' || down.includes(a as (typeof down)[number])))
    return undefined;
  return failure(503, 'ServiceUnavailable', unavailableMessage(down));
}

/**
 * What Karmada's cluster proxy writes for a member it cannot dial: its UpgradeAwareHandler hands the
 * transport's error to the apiserver's REST responder, which writes an error that is no API status as
 * kube does (responsewriters.ErrorToAPIStatus): HTTP 500, `reason` empty (StatusReasonUnknown), the Go dial
 * error as the message: `dial tcp 172.18.0.3:6443: connect: connection refused`, `dial tcp: lookup … no
 * such host`, `dial tcp …: i/o timeout` (through a Cluster's proxyURL: `proxyconnect tcp: dial tcp …`);
 * a member that accepts the connection but never completes TLS (a stalled apiserver) gives
 * `net/http: TLS handshake timeout` after 10 s (seen against Karmada v1.18.2, testbed/), one whose
 * certificate the Cluster's caBundle does not verify `tls: failed to verify certificate: x509: …`.
 * A member's own errors carry a reason (500 InternalError) or another message (a kubelet it cannot reach
 * for logs: `Get "https://…:10250/…": dial tcp …`), so they never match.
 */
const DIAL_ERROR =
  /^((proxyconnect tcp: )?dial (tcp|tcp4|tcp6)[ :]|net\/http: TLS handshake timeout$|tls: failed to verify certificate: )/;

/**
 * The fleet's answer for `cluster` when a request routed through Karmada's cluster proxy got the proxy's
 * answer for a member it cannot dial (`httpStatus` and its Status body): a 503 ServiceUnavailable naming the
 * cluster, as the fleet answers for a member it cannot reach itself, with the proxy's message kept.
 * Undefined for any other answer (a member's own 500 InternalError stays that). Pure.
 */
export function undialedMember(
  cluster: string,
  httpStatus: number,
  status: Pick<Status, 'code' | 'reason' | 'message'> | undefined,
): Status | undefined {
  if (httpStatus !== 500 || status?.code !== 500 || status.reason) return undefined;
  const message = status.message ?? '';
  if (!DIAL_ERROR.test(message)) return undefined;
  return failure(
    503,
    'ServiceUnavailable',
    `cluster ${cluster}: unreachable through Karmada's cluster proxy: ${message}`,
  );
}
