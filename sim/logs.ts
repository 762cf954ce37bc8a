/**
 * pods/log: container logs kept per container, served as text/plain like the kubelet stream the apiserver
 * relays (`container`, `tailLines`, `sinceSeconds`, `limitBytes`, `timestamps`, `previous`, `follow`).
 */

import type { KubeObject } from './catalog/types.ts';
import { StatusError } from './http.ts';
import { queryBool } from './paths.ts';
import { badRequest } from './status.ts';

interface Line {
  time: Date;
  text: string;
}

type Follower = (line: Line) => void;

function logKey(ns: string, pod: string, container: string): string {
  return `${ns}/${pod}/${container}`;
}

/** RFC3339Nano as the kubelet writes it (nanosecond digits, trailing zeros trimmed like Go). */
function rfc3339Nano(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, (_m, ms: string) => {
    const frac = `${ms}000000`.replace(/0+$/, '');
    return frac ? `.${frac}Z` : 'Z';
  });
}

export class LogStore {
  private readonly lines = new Map<string, Line[]>();
  private readonly followers = new Map<string, Set<Follower>>();

  append(ns: string, pod: string, container: string, text: string, time: Date): void {
    const k = logKey(ns, pod, container);
    const l = { time, text: text.replace(/\n$/, '') };
    let arr = this.lines.get(k);
    if (!arr) {
      arr = [];
      this.lines.set(k, arr);
    }
    arr.push(l);
    if (arr.length > 5000) arr.splice(0, arr.length - 5000);
    for (const f of [...(this.followers.get(k) ?? [])]) f(l);
  }

  has(ns: string, pod: string, container: string): boolean {
    return this.lines.has(logKey(ns, pod, container));
  }

  read(ns: string, pod: string, container: string): Line[] {
    return [...(this.lines.get(logKey(ns, pod, container)) ?? [])];
  }

  follow(ns: string, pod: string, container: string, f: Follower): () => void {
    const k = logKey(ns, pod, container);
    let s = this.followers.get(k);
    if (!s) {
      s = new Set();
      this.followers.set(k, s);
    }
    s.add(f);
    return () => s.delete(f);
  }

  /** Pod deleted: its logs go with it. */
  dropPod(ns: string, pod: string): void {
    for (const k of [...this.lines.keys()]) if (k.startsWith(`${ns}/${pod}/`)) this.lines.delete(k);
  }
}

export interface LogRequest {
  pod: KubeObject;
  query: URLSearchParams;
  now: () => Date;
  logs: LogStore;
  /** called when the follower stream should stop because the pod went away */
  onPodGone: (stop: () => void) => () => void;
  track: (stop: () => void) => () => void;
}

const encoder = new TextEncoder();

export function serveLog(r: LogRequest): Response {
  const pod = r.pod as KubeObject & {
    spec?: {
      containers?: Array<{ name: string }>;
      initContainers?: Array<{ name: string }>;
      ephemeralContainers?: Array<{ name: string }>;
    };
    status?: {
      phase?: string;
      containerStatuses?: Array<{ name: string; restartCount?: number; state?: Record<string, unknown> }>;
      ephemeralContainerStatuses?: Array<{
        name: string;
        restartCount?: number;
        state?: Record<string, unknown>;
      }>;
    };
  };
  const ns = pod.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  const containers = (pod.spec?.containers ?? []).map((c) => c.name);
  const inits = (pod.spec?.initContainers ?? []).map((c) => c.name);
  const ephemeral = (pod.spec?.ephemeralContainers ?? []).map((c) => c.name);
  let container = r.query.get('container') ?? '';
  if (!container) {
    if (containers.length === 1) container = containers[0]!;
    else {
      const initPart = inits.length ? ` or one of the init containers: [${inits.join(' ')}]` : '';
      throw new StatusError(
        badRequest(
          `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]${initPart}`,
        ),
      );
    }
  }
  if (!containers.includes(container) && !inits.includes(container) && !ephemeral.includes(container)) {
    throw new StatusError(badRequest(`container ${container} is not valid for pod ${name}`));
  }
  const status = [
    ...(pod.status?.containerStatuses ?? []),
    ...(pod.status?.ephemeralContainerStatuses ?? []),
  ].find((c) => c.name === container);
  if (pod.status?.phase === 'Pending' || !status?.state || 'waiting' in status.state) {
    const reason =
      (status?.state?.['waiting'] as { reason?: string } | undefined)?.reason ?? 'ContainerCreating';
    throw new StatusError(
      badRequest(`container "${container}" in pod "${name}" is waiting to start: ${reason}`),
    );
  }
  if (queryBool(r.query, 'previous')) {
    if (!status.restartCount) {
      throw new StatusError(
        badRequest(`previous terminated container "${container}" in pod "${name}" not found`),
      );
    }
  }
  const timestamps = queryBool(r.query, 'timestamps');
  const fmt = (l: Line) => (timestamps ? `${rfc3339Nano(l.time)} ${l.text}\n` : `${l.text}\n`);
  let lines = r.logs.read(ns, name, container);
  const since = Number(r.query.get('sinceSeconds') ?? '0');
  if (since > 0) lines = lines.filter((l) => l.time.getTime() >= r.now().getTime() - since * 1000);
  const sinceTime = r.query.get('sinceTime');
  if (sinceTime) lines = lines.filter((l) => l.time.getTime() >= Date.parse(sinceTime));
  const tail = r.query.get('tailLines');
  if (tail !== null && /^\d+$/.test(tail)) lines = Number(tail) === 0 ? [] : lines.slice(-Number(tail));
  const limitBytes = Number(r.query.get('limitBytes') ?? '0');
  const headers = { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private' };

  if (!queryBool(r.query, 'follow')) {
    let body = lines.map(fmt).join('');
    if (limitBytes > 0) body = new TextDecoder().decode(encoder.encode(body).slice(0, limitBytes));
    return new Response(body, { status: 200, headers });
  }

  let sent = 0;
  let stop = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let done = false;
      const push = (l: Line) => {
        if (done) return;
        let bytes = encoder.encode(fmt(l));
        if (limitBytes > 0) {
          bytes = bytes.slice(0, Math.max(0, limitBytes - sent));
          sent += bytes.length;
        }
        if (bytes.length) controller.enqueue(bytes);
        if (limitBytes > 0 && sent >= limitBytes) finish();
      };
      const unfollow = r.logs.follow(ns, name, container, push);
      let unGone = () => {};
      let untrack = () => {};
      const finish = () => {
        if (done) return;
        done = true;
        unfollow();
        unGone();
        untrack();
        try {
          controller.close();
        } catch {
          // already cancelled by the reader
        }
      };
      stop = () => {
        done = true;
        unfollow();
        unGone();
        untrack();
      };
      for (const l of lines) push(l);
      unGone = r.onPodGone(finish);
      untrack = r.track(finish);
    },
    cancel() {
      stop();
    },
  });
  return new Response(stream, { status: 200, headers: { ...headers, 'Transfer-Encoding': 'chunked' } });
}
