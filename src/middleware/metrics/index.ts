/**
 * Request metrics, like kube-apiserver's instrumentation of its handler chain: every request counted by
 * kube's labels and code (refusals by later filters included, so this runs right after request info),
 * in flight while it runs, long-running ones (watches, `logs -f`, exec) tracked until their stream ends.
 */
import { type FleetMetrics, kubeVerb, type RequestLabels } from '../../metrics/fleet.ts';
import type { RequestInfo } from '../../request/info.ts';
import { onBodyEnd } from '../../util/ends.ts';
import { afterAnswer, type Filter } from '../filter.ts';

export function labelsOf(
  info: RequestInfo | undefined,
  method: string,
  contentType: string | undefined,
): RequestLabels {
  if (!info?.isResourceRequest)
    return {
      verb: kubeVerb('', method),
      group: '',
      version: '',
      resource: '',
      subresource: '',
      scope: '',
      component: 'apiserver',
    };
  return {
    // only a patch's verb depends on its body's type (APPLY): other requests split nothing
    verb: kubeVerb(info.verb, method, info.verb === 'patch' ? mediaType(contentType) : undefined),
    group: info.apiGroup,
    version: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    scope: info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster',
    component: 'apiserver',
  };
}

function mediaType(contentType: string | undefined): string | undefined {
  return contentType?.split(';')[0]?.trim();
}

/** kube-apiserver's long-running verbs and subresources (its LongRunningFunc, see {@link isLongRunning}) */
const LONG_RUNNING_VERBS: ReadonlySet<string> = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES: ReadonlySet<string> = new Set([
  'attach',
  'exec',
  'proxy',
  'log',
  'portforward',
]);

/**
 * kube's long-running requests, exactly as kube-apiserver's LongRunningFunc decides them
 * (genericfilters.BasicLongRunningRequestCheck with the verbs watch and proxy and the subresources attach,
 * exec, proxy, log and portforward): by verb, by a resource request's subresource, and a non-resource
 * request under /debug/pprof/ (the path the cluster is asked: a member's profiler through passthrough).
 * A log is long-running whether it follows or not, as in kube.
 */
export function isLongRunning(info: RequestInfo | undefined): boolean {
  if (!info) return false;
  if (LONG_RUNNING_VERBS.has(info.verb)) return true;
  if (info.isResourceRequest) return LONG_RUNNING_SUBRESOURCES.has(info.subresource);
  return info.kubePath.startsWith('/debug/pprof/');
}

/** Answers that left a cluster out say so in a Warning naming it (`cluster <name>: …`): count those. */
function countPartial(metrics: FleetMetrics, warning: string | null): void {
  if (!warning) return;
  for (const m of warning.matchAll(/299 - "cluster ([a-z0-9](?:[-a-z0-9]*[a-z0-9])?):/g))
    metrics.partial.inc({ cluster: m[1]! });
}

const now = () => performance.now();

/** The request metrics filter; none without metrics to record into. */
export function requestMetrics(metrics: FleetMetrics | undefined): Filter | undefined {
  if (!metrics) return undefined;
  return (c, next) => {
    const info = c.get('info');
    const longRunning = isLongRunning(info);
    const done = metrics.startRequest(
      labelsOf(info, c.req.method, c.req.header('content-type')),
      longRunning,
      now,
    );
    // what the callback below needs of `c`: closures made in it (a watch's end listener lives as long as
    // the watch) then keep the request, not the whole Context (≈ 1.5 KiB per open merged watch)
    const raw = c.req.raw;
    // a throw below has already become a Status (the app's onError, where it was thrown): counted with its code
    return afterAnswer(c, next(), (res) => {
      countPartial(metrics, res.headers.get('warning'));
      // an upgrade (101) is handed to the runtime as it is; a stream is counted when it ends
      if (!longRunning || !res.body || res.status === 101) {
        done(res.status);
        return res;
      }
      const status = res.status;
      // a body that tells its end (the merged watch's) needs no stream layer to be counted
      if (onBodyEnd(res.body, () => done(status))) return res;
      const ended = new TransformStream<Uint8Array, Uint8Array>({ flush: () => done(status) });
      const body = res.body.pipeThrough(ended);
      // a client that goes away cancels the stream: the request is over for the gauge too
      raw.signal?.addEventListener('abort', () => done(status), { once: true });
      return new Response(body, { status, statusText: res.statusText, headers: res.headers });
    });
  };
}
