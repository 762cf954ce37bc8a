/**
 * One command run in every pod a label selector matches across a clusterspace (`kubectl fleet exec`),
 * pure: the request read from its query, each pod's upstream exec path, the exec channel protocol read,
 * and the summary.
 *
 * The endpoint is the fleet's own:
 *   GET|POST /apis/fleet.karmada.io/v1alpha1/namespaces/<ns>/podexecs
 *     ?labelSelector=app=web&command=sh&command=-c&command=…   (repeated, as kube's pods/exec takes it)
 *     [&container=c][&clusterspace=all|<cluster>][&maxConcurrency=N]
 * GET so that `kubectl get --raw` can call it with the kubeconfig's credentials and stream the answer;
 * it goes through the fleet's whole chain, and every pod's exec is the caller's, decided by that
 * cluster's RBAC (`create pods/exec`).
 *
 * The answer is NDJSON, one event a line, in the order things happen:
 *   {"pod":"<fleet name>","stream":"stdout"|"stderr","line":"…"}
 *   {"pod":"<fleet name>","exitCode":N}                 the command ended (0: success)
 *   {"pod":"<fleet name>","error":"…"}                  it could not be run (refused, unreachable, …)
 *   {"cluster":"<cluster>","error":"…"}                 a cluster whose pods could not be listed
 *   {"summary":{"pods":N,"succeeded":N,"failed":{"<pod>":code|"error"},"clusters":{"<cluster>":"…"}}}
 * The summary line always ends a complete answer; a body without one was cut.
 */
import { badRequest, type Status } from '../kube/status.ts';

export const FLEET_EXEC_GROUP = 'fleet.karmada.io';
export const FLEET_EXEC_RESOURCE = 'podexecs';
export const DEFAULT_CONCURRENCY = 8;
export const MAX_CONCURRENCY = 64;

export function isFleetExec(info: { apiGroup: string; resource: string; name: string }): boolean {
  return info.apiGroup === FLEET_EXEC_GROUP && info.resource === FLEET_EXEC_RESOURCE && info.name === '';
}

export interface FleetExecAsk {
  namespace: string;
  labelSelector: string;
  command: string[];
  container?: string;
  clusterspace: string;
  maxConcurrency: number;
}

/** The ask in the query, or a 400 naming what is wrong. */
export function readFleetExec(namespace: string, q: URLSearchParams): FleetExecAsk | Status {
  if (!namespace)
    return badRequest('podexecs are namespaced: /apis/fleet.karmada.io/v1alpha1/namespaces/<ns>/podexecs');
  const command = q.getAll('command');
  if (command.length === 0 || command[0] === '')
    return badRequest('at least one command parameter is required');
  const labelSelector = q.get('labelSelector') ?? '';
  if (!labelSelector.trim())
    return badRequest(
      'a labelSelector is required: a command for every pod of a namespace is one selector away',
    );
  const raw = q.get('maxConcurrency');
  let maxConcurrency = DEFAULT_CONCURRENCY;
  if (raw !== null) {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY)
      return badRequest(
        `maxConcurrency must be an integer from 1 to ${MAX_CONCURRENCY}, not ${JSON.stringify(raw)}`,
      );
    maxConcurrency = n;
  }
  const container = q.get('container') || undefined;
  return {
    namespace,
    labelSelector,
    command,
    ...(container ? { container } : {}),
    clusterspace: q.get('clusterspace') || 'all',
    maxConcurrency,
  };
}

/** The pod list one cluster is asked for. */
export function podListPath(ask: FleetExecAsk): string {
  const q = new URLSearchParams({ labelSelector: ask.labelSelector });
  return `/api/v1/namespaces/${encodeURIComponent(ask.namespace)}/pods?${q}`;
}

/** The upstream exec of one pod (plain name): stdout and stderr, no stdin, no tty, as kube's query reads it. */
export function execPath(ask: FleetExecAsk, pod: string): string {
  const q = new URLSearchParams();
  for (const c of ask.command) q.append('command', c);
  if (ask.container) q.set('container', ask.container);
  q.set('stdout', 'true');
  q.set('stderr', 'true');
  return `/api/v1/namespaces/${encodeURIComponent(ask.namespace)}/pods/${encodeURIComponent(pod)}/exec?${q}`;
}

/** The pods of one cluster's list answer worth running in: those not finished (Succeeded/Failed). */
export function runnablePods(list: unknown): string[] {
  const items = (list as { items?: unknown[] } | null)?.items;
  if (!Array.isArray(items)) return [];
  return items.flatMap((p: any) => {
    const name = p?.metadata?.name;
    const phase = p?.status?.phase;
    return typeof name === 'string' && phase !== 'Succeeded' && phase !== 'Failed' ? [name] : [];
  });
}

// ------------------------------------------------------------------------------- the channel protocol

/** Channels of the remotecommand protocols (v4/v5.channel.k8s.io): a frame's first byte. */
export const CHANNEL_STDOUT = 1;
export const CHANNEL_STDERR = 2;
export const CHANNEL_ERROR = 3;

/**
 * The exit code a remotecommand error-channel message means: the v4+ protocols send a metav1.Status
 * there, Success for exit 0, `NonZeroExitCode` with an `ExitCode` cause for another code, any other
 * failure with its message (the command could not be run).
 */
export function exitOf(statusText: string): { exitCode: number } | { error: string } {
  let st: any;
  try {
    st = JSON.parse(statusText);
  } catch {
    return { error: statusText.trim() || 'the exec ended with an unreadable status' };
  }
  if (st?.status === 'Success') return { exitCode: 0 };
  if (st?.reason === 'NonZeroExitCode') {
    const cause = (st.details?.causes ?? []).find((c: any) => c?.reason === 'ExitCode');
    const code = Number(cause?.message);
    if (Number.isInteger(code)) return { exitCode: code };
  }
  return { error: typeof st?.message === 'string' && st.message ? st.message : statusText };
}

/** Splits a stream's bytes into whole lines, keeping the unfinished rest for the next chunk. */
export class LineSplitter {
  private rest = '';
  private readonly decoder = new TextDecoder();

  push(bytes: Uint8Array): string[] {
    const text = this.rest + this.decoder.decode(bytes, { stream: true });
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    return lines.map((l) => l.replace(/\r$/, ''));
  }

  /** What is left at the end (a last line without a newline). */
  end(): string[] {
    const last = this.rest + this.decoder.decode();
    this.rest = '';
    return last ? [last] : [];
  }
}

// ------------------------------------------------------------------------------------------- summary

export type PodOutcome = { exitCode: number } | { error: string };

export interface FleetExecSummary {
  pods: number;
  succeeded: number;
  failed: Record<string, number | string>;
  clusters: Record<string, string>;
}

export function summarize(
  outcomes: ReadonlyMap<string, PodOutcome>,
  clusters: ReadonlyMap<string, string>,
): FleetExecSummary {
  const failed: Record<string, number | string> = {};
  let succeeded = 0;
  for (const [pod, o] of outcomes) {
    if ('exitCode' in o && o.exitCode === 0) succeeded++;
    else failed[pod] = 'exitCode' in o ? o.exitCode : o.error;
  }
  return { pods: outcomes.size, succeeded, failed, clusters: Object.fromEntries(clusters) };
}
