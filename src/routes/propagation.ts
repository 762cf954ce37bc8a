/**
 * Propagation of one object at the root (docs/propagation.md), a helper of the get route: a Karmada
 * template says where it went, a copy which template it came from and whether it drifted.
 */
import { stripMarkers } from '../merge/objects/index.ts';
import { showRecordIn } from '../merge/objects/lastapplied.ts';
import { copyAnnotations, copyFacts, enrichItem, isCopy, mayBePropagated } from '../plan/propagation.ts';
import type { RequestInfo } from '../request/info.ts';
import type { FanOutDeps } from '../types.ts';
import { readBindings } from '../upstreams/bindings.ts';
import type { Target } from '../upstreams/fanout.ts';

/**
 * One object answered by a GET at the root (what `kubectl describe` reads): a template gains where it went,
 * a copy its template and drift, as annotations. The bindings (and, for a copy, its Works) are read only
 * for a whole object of a kind Karmada may propagate, when the control plane is in the fleet view.
 */
export async function objectPropagation(
  deps: FanOutDeps,
  info: RequestInfo,
  targets: Target[],
  cluster: string,
  plain: string,
  answer: Response,
  req: Request,
): Promise<Response> {
  const karmada = targets.find((t) => t.controlPlane);
  if (!karmada || !answer.ok || info.subresource || !mayBePropagated(info)) return answer;
  if (!(answer.headers.get('content-type') ?? '').startsWith('application/json')) return answer;
  const text = await answer.text();
  const again = () => new Response(text, answer);
  let obj: Record<string, any>;
  try {
    obj = JSON.parse(text);
  } catch {
    return again();
  }
  const copy = isCopy(obj);
  if (!obj?.metadata || obj.kind === 'Table' || obj.kind === 'PartialObjectMetadata') return again();
  if (!copy && cluster !== karmada.cluster) return again();
  // a named object without a namespace is cluster-scoped: only ClusterResourceBindings can hold it
  const ask = {
    namespace: info.namespace,
    cluster: info.namespace === '',
    group: info.apiGroup,
    resource: info.resource,
    works: copy,
  };
  const read = await readBindings(deps, karmada, ask, req.signal);
  if (!read || read.index.byBinding.size === 0) return again();
  const { index } = read;
  await read.works;
  if (copy) {
    // compared as the member holds it: the fleet view's name in client-side apply's record, its markers
    // and its pod-selector term are the fleet's, not drift
    const held = stripMarkers(structuredClone(obj));
    if (held.metadata?.name !== plain)
      showRecordIn(held.metadata?.annotations, {
        name: { plain: String(held.metadata?.name), shown: plain },
      });
    const facts = copyFacts(index, held, cluster, true);
    if (facts) obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), ...copyAnnotations(facts) };
  } else enrichItem(index, obj, cluster, true);
  const headers = new Headers(answer.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(obj), { status: answer.status, headers });
}
