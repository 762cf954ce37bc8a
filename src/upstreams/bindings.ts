/**
 * The one reader of Karmada's bindings and their Works (docs/propagation.md), for every view that shows
 * propagation: a merged list, a Table watch (at its start and as it refreshes), a GET at the root, and a
 * drift report. ResourceBindings for namespaced templates, ClusterResourceBindings for cluster-scoped ones
 * (merge/bindings.ts says which are read for a scope and how they are indexed), each list read once from
 * the control plane as the caller, in parallel.
 */
import {
  addWorks,
  type BindingScope,
  bindingsPaths,
  indexBindings,
  type PropagationIndex,
  worksPaths,
} from '../merge/bindings.ts';
import type { FanOutDeps } from '../types.ts';
import type { Target } from './fanout.ts';
import { readJson } from './json.ts';

export interface BindingsAsk extends BindingScope {
  /** the templates' group and resource (a binding of another kind is not indexed) */
  group: string;
  resource: string;
  /** only the binding of this template (`namespace/name`, `/name` when cluster-scoped) */
  template?: string;
  /** whether the Works are read too (a copy's drift needs them) */
  works: boolean;
}

export interface BindingsRead {
  index: PropagationIndex;
  /** the Works, added to the index as they come (at once when not asked for or no binding is indexed) */
  works: Promise<void>;
  /**
   * false when one of two binding lists (an ask without a namespace reads both kinds) could not be read:
   * the index holds the other's, which is the whole answer for a kind of that scope and none for the other
   */
  complete: boolean;
}

/**
 * The bindings of `ask`'s kind and scope, their Works read beside (awaited by whoever needs them), or
 * undefined when the control plane could not say (no binding list readable: the caller goes on without).
 * A caller who may list ResourceBindings but not ClusterResourceBindings (or the other way round) still
 * sees the propagation of the kinds whose list it could read.
 */
export async function readBindings(
  deps: FanOutDeps,
  karmada: Target,
  ask: BindingsAsk,
  signal: AbortSignal,
): Promise<BindingsRead | undefined> {
  const all = await Promise.all(bindingsPaths(ask).map((p) => readJson(deps, karmada, p, signal)));
  const lists = all.filter((l) => l !== undefined);
  if (lists.length === 0) return undefined;
  const complete = lists.length === all.length;
  const index = indexBindings(lists, ask.group, ask.resource);
  if (ask.template !== undefined) {
    const p = index.byTemplate.get(ask.template);
    index.byTemplate = new Map(p ? [[ask.template, p]] : []);
    index.byBinding = new Map(p ? [[p.binding, p]] : []);
  }
  if (!ask.works || index.byBinding.size === 0) return { index, works: Promise.resolve(), complete };
  const works = Promise.all(worksPaths(index).map((p) => readJson(deps, karmada, p, signal))).then(
    (found) => {
      for (const list of found) if (list !== undefined) addWorks(index, list);
    },
  );
  return { index, works, complete };
}
