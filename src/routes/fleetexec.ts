/**
 * `kubectl fleet exec`: one command in every pod a label selector matches across a clusterspace, the
 * fleet's own endpoint `/apis/fleet.karmada.io/v1alpha1/namespaces/<ns>/podexecs` (what it takes and
 * answers: src/plan/fleetexec.ts). The pods are listed in every cluster at once (fleet order), then each
 * pod's exec runs upstream as the caller, at most `maxConcurrency` at a time (and never more than the
 * runtime's connection budget per request), its output streamed back as NDJSON lines as it comes.
 *
 * Each upstream exec is a WebSocket (v5.channel.k8s.io, v4 offered too) opened through the bound
 * client, so identity and header hygiene are the client's as for every other call:
 * - Workers: the runtime's `fetch` opens it (`Upgrade: websocket`; the answer carries `webSocket`);
 * - elsewhere: through a transport the entry hands the request's env under {@link EXEC_TRANSPORT} whose
 *   101 answer carries an object of the same shape; without one the endpoint answers 405 before asking
 *   any cluster.
 */
import type { Context } from 'hono';
import { failure, statusResponse } from '../kube/status.ts';
import { type FleetView, fleetName } from '../merge/objects/index.ts';
import {
  CHANNEL_ERROR,
  CHANNEL_STDERR,
  CHANNEL_STDOUT,
  execPath,
  exitOf,
  type FleetExecAsk,
  LineSplitter,
  type PodOutcome,
  podListPath,
  readFleetExec,
  runnablePods,
  summarize,
} from '../plan/fleetexec.ts';
import { EXEC_TRANSPORT, type ExecSocket } from '../platform/types.ts';
import type { RequestInfo } from '../request/info.ts';
import type { ClustersDeps, FanOutDeps } from '../types.ts';
import { clusterspaceTargets, fanOut, type Target } from '../upstreams/fanout.ts';
import type { Transport } from '../upstreams/transport.ts';
import { undialed } from './locate.ts';
import { streamResponse, unknownClusterspace } from './respond.ts';

export type FleetExecDeps = FanOutDeps & ClustersDeps & { config: ClustersDeps['config'] };

function execTransportOf(env: unknown): Transport | undefined {
  const t = (env as Record<string, unknown> | undefined)?.[EXEC_TRANSPORT] as Transport | undefined;
  return t && typeof t.send === 'function' ? t : undefined;
}

/** Whether this runtime's own fetch opens WebSockets (workerd's does; Node's refuses an Upgrade header). */
function fetchOpensWebSockets(): boolean {
  return typeof (globalThis as { WebSocketPair?: unknown }).WebSocketPair === 'function';
}

export async function fleetExecRoute(c: Context, deps: FleetExecDeps, info: RequestInfo): Promise<Response> {
  const req = c.req.raw;
  if (req.method !== 'GET' && req.method !== 'POST')
    return statusResponse(failure(405, 'MethodNotAllowed', 'podexecs take GET or POST'));
  const ask = readFleetExec(info.namespace, new URL(req.url).searchParams);
  if ('code' in ask) return statusResponse(ask);
  const via = execTransportOf(c.env);
  if (!via && !fetchOpensWebSockets())
    return statusResponse(
      failure(
        405,
        'MethodNotAllowed',
        'this fleet runtime cannot open upstream exec WebSockets for podexecs (no exec transport)',
      ),
    );
  const targets = await clusterspaceTargets(deps, ask.clusterspace, req.signal);
  if (!targets) return unknownClusterspace(deps, ask.clusterspace, req.signal);
  const headers = new Headers({ 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-store' });
  return streamResponse(run(deps, req, ask, targets, via), 200, headers);
}

interface PodRef {
  target: Target;
  plain: string;
  fleet: string;
}

/** Lists the matching pods of every target; clusters that cannot say are reported, not fatal. */
async function listPods(
  deps: FleetExecDeps,
  req: Request,
  ask: FleetExecAsk,
  targets: Target[],
): Promise<{ pods: PodRef[]; clusters: Map<string, string> }> {
  const view: FleetView = { federation: deps.config.federation };
  const outcomes = await fanOut(deps, targets, () => ({
    method: 'GET',
    path: podListPath(ask),
    headers: new Headers({ Accept: 'application/json', 'Accept-Encoding': 'identity' }),
    signal: req.signal,
  }));
  const pods: PodRef[] = [];
  const clusters = new Map<string, string>();
  for (const o of outcomes) {
    if (!o.ok) {
      clusters.set(o.target.cluster, `unreachable: ${o.error.message}`);
      continue;
    }
    // Karmada's cluster proxy that could not dial the member: unreachable, as a failed call is
    const res = await undialed(o.target, o.res);
    const text = await res.text().catch(() => '');
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (res !== o.res && res.status === 503) {
      clusters.set(o.target.cluster, `unreachable: ${body?.message ?? text.slice(0, 200)}`);
      continue;
    }
    if (!res.ok) {
      clusters.set(
        o.target.cluster,
        `pods could not be listed: ${res.status} ${body?.message ?? text.slice(0, 200)}`,
      );
      continue;
    }
    for (const plain of runnablePods(body))
      pods.push({ target: o.target, plain, fleet: fleetName(view, plain, o.target.cluster) });
  }
  return { pods, clusters };
}

/** A queue of NDJSON lines several execs write into and one generator reads. */
class Lines {
  private readonly buf: string[] = [];
  private closed = false;
  private wake?: () => void;
  push(event: unknown): void {
    this.buf.push(`${JSON.stringify(event)}\n`);
    this.wake?.();
  }
  close(): void {
    this.closed = true;
    this.wake?.();
  }
  async *drain(): AsyncGenerator<string> {
    for (;;) {
      if (this.buf.length) {
        yield this.buf.splice(0).join('');
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((r) => {
        this.wake = r;
      });
      this.wake = undefined;
    }
  }
}

async function* run(
  deps: FleetExecDeps,
  req: Request,
  ask: FleetExecAsk,
  targets: Target[],
  via: Transport | undefined,
): AsyncGenerator<string> {
  const { pods, clusters } = await listPods(deps, req, ask, targets);
  for (const [cluster, error] of clusters) yield `${JSON.stringify({ cluster, error })}\n`;
  const out = new Lines();
  const outcomes = new Map<string, PodOutcome>();
  const width = Math.max(1, Math.min(ask.maxConcurrency, deps.maxConnectionsPerRequest));
  let next = 0;
  const worker = async () => {
    while (next < pods.length) {
      const pod = pods[next++]!;
      const o = await execOne(deps, req, ask, pod, via, out).catch(
        (e: Error): PodOutcome => ({ error: e.message }),
      );
      outcomes.set(pod.fleet, o);
      out.push({ pod: pod.fleet, ...o });
    }
  };
  const all = Promise.all(Array.from({ length: Math.min(width, pods.length) }, worker)).finally(() =>
    out.close(),
  );
  yield* out.drain();
  await all;
  // every pod in fleet order in the summary, whatever order they finished in
  const ordered = new Map(
    pods.flatMap((p) => (outcomes.has(p.fleet) ? [[p.fleet, outcomes.get(p.fleet)!]] : [])),
  );
  yield `${JSON.stringify({ summary: summarize(ordered, clusters) })}\n`;
}

/** Runs the command in one pod; its output goes to `out` line by line, the outcome is returned. */
async function execOne(
  deps: FleetExecDeps,
  req: Request,
  ask: FleetExecAsk,
  pod: PodRef,
  via: Transport | undefined,
  out: Lines,
): Promise<PodOutcome> {
  const headers = new Headers({
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Protocol': 'v5.channel.k8s.io, v4.channel.k8s.io',
  });
  const res = await deps.client.send(pod.target.endpoint, {
    method: 'GET',
    path: execPath(ask, pod.plain),
    headers,
    upgrade: true,
    signal: req.signal,
    ...(via ? { via } : {}),
  });
  const ws = (res as Response & { webSocket?: ExecSocket | null }).webSocket;
  if (!ws) {
    // Karmada's cluster proxy that could not dial the member: the 503 naming the cluster
    const answer = await undialed(pod.target, res);
    const text = await answer.text().catch(() => '');
    let message = text.slice(0, 300);
    try {
      message = JSON.parse(text).message ?? message;
    } catch {
      // not a Status: the text as it came
    }
    return { error: `exec refused: ${answer.status} ${message}`.trim() };
  }
  return readExec(ws, pod.fleet, out, req.signal);
}

/** Reads one exec's channel frames until the socket closes: lines out, the exit code back. */
function readExec(ws: ExecSocket, fleet: string, out: Lines, signal: AbortSignal): Promise<PodOutcome> {
  return new Promise<PodOutcome>((resolve) => {
    const split = { stdout: new LineSplitter(), stderr: new LineSplitter() };
    let status = '';
    const onAbort = () => ws.close(1000, 'the client went away');
    signal.addEventListener('abort', onAbort, { once: true });
    ws.accept();
    ws.binaryType = 'arraybuffer';
    const enc = new TextEncoder();
    ws.addEventListener('message', (e) => {
      const bytes = typeof e.data === 'string' ? enc.encode(e.data) : new Uint8Array(e.data);
      if (bytes.length === 0) return;
      const ch = bytes[0];
      const payload = bytes.subarray(1);
      const stream = ch === CHANNEL_STDOUT ? 'stdout' : ch === CHANNEL_STDERR ? 'stderr' : undefined;
      if (stream) for (const line of split[stream].push(payload)) out.push({ pod: fleet, stream, line });
      else if (ch === CHANNEL_ERROR) status += new TextDecoder().decode(payload);
    });
    let finished = false;
    const finish = (why?: string) => {
      if (finished) return;
      finished = true;
      signal.removeEventListener('abort', onAbort);
      for (const stream of ['stdout', 'stderr'] as const)
        for (const line of split[stream].end()) out.push({ pod: fleet, stream, line });
      // a closed stream without a status: kube's own clients read that as success (exit 0) too
      resolve(status ? exitOf(status) : why ? { error: why } : { exitCode: 0 });
    };
    ws.addEventListener('close', () => finish());
    ws.addEventListener('error', () => finish('the exec stream broke'));
  });
}
