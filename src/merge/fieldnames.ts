/**
 * Fleet names (`<name>.clusterspace.<cluster>`) inside field selectors: which cluster a selector pins,
 * and what each cluster is sent. The selector grammar itself is Kubernetes' (src/kube/selectors.ts).
 */
import {
  type FieldRequirement,
  NAME_FIELDS,
  parseFieldSelector,
  serializeFieldSelector,
} from '../kube/fields.ts';
import { type DecodedName, decodeName, isShortenedName } from './names/index.ts';
import { REFERENCE_FIELDS } from './objects/references.ts';

/** the object's own name, and the references the fleet shows by fleet name (references.ts) */
function namesAnObject(field: string): boolean {
  return NAME_FIELDS.has(field) || REFERENCE_FIELDS.has(field);
}

export type FieldNameRewrite =
  | { matchesNothing: true }
  | {
      matchesNothing: false;
      /** the one cluster the selector pins, if any: ask only it */
      cluster: string | undefined;
      /** the selector to send to `cluster` (plain names; canonical text, "" when empty) */
      forwardFor(cluster: string): string;
    };

/**
 * Rewrites fleet names in the terms that name objects: `metadata.name`, and the references of
 * references.ts (`spec.nodeName`, `status.nominatedNodeName`, `involvedObject.name`, `regarding.name`,
 * `related.name`; what `kubectl describe node|pod` sends):
 * - `=` with `<n>.clusterspace.<c>`: forwards `=<n>` and pins cluster `c`; two different pinned clusters
 *   (or a fleet name and `plainNameCluster` disagreeing) → `matchesNothing`: answer an empty list;
 * - `!=` with `<n>.clusterspace.<c>`: forwarded as `!=<n>` to cluster `c` only (elsewhere every object's
 *   fleet name differs anyway, so the term is dropped there);
 * - plain values: forwarded unchanged to every cluster, unless `plainNameCluster` is given (federation on:
 *   a plain name means the control plane), in which case `=` pins that cluster and `!=` applies only there.
 * Other terms, and empty values, are forwarded unchanged. Throws {@link SelectorError} for an invalid selector.
 */
export function rewriteFieldSelectorNames(
  selector: string | undefined | null,
  opts: { decode?: (name: string) => DecodedName; plainNameCluster?: string } = {},
): FieldNameRewrite {
  const decode = opts.decode ?? decodeName;
  const reqs = selector ? parseFieldSelector(selector) : [];
  type Term = { req: FieldRequirement; only?: string };
  const terms: Term[] = [];
  let pinned: string | undefined;
  let conflict = false;
  const pin = (c: string) => {
    if (pinned !== undefined && pinned !== c) conflict = true;
    pinned = c;
  };
  for (const req of reqs) {
    // an empty value names no object (`spec.nodeName=`: the unscheduled pods of every cluster)
    if (!namesAnObject(req.field) || req.value === '') {
      terms.push({ req });
      continue;
    }
    const d = decode(req.value);
    const cluster = d.cluster ?? opts.plainNameCluster;
    const plain = { ...req, value: d.name };
    if (cluster === undefined) terms.push({ req });
    else if (req.operator === '=') {
      pin(cluster);
      terms.push({ req: plain });
    } else terms.push({ req: plain, only: cluster });
  }
  if (conflict) return { matchesNothing: true };
  return {
    matchesNothing: false,
    cluster: pinned,
    forwardFor: (cluster: string) =>
      serializeFieldSelector(
        terms.filter((t) => t.only === undefined || t.only === cluster).map((t) => t.req),
      ),
  };
}

/**
 * The terms of a field selector that name an object by a shortened fleet name not known here (names.ts):
 * what src/routes/locate.ts looks up before the selector is planned. None for a selector that does not
 * parse (the plan answers its 400).
 */
export function unresolvedNameTerms(selector: string | undefined | null): { field: string; value: string }[] {
  if (!selector?.includes('.clusterspace-h.')) return [];
  let reqs: FieldRequirement[];
  try {
    reqs = parseFieldSelector(selector);
  } catch {
    return [];
  }
  return reqs
    .filter((r) => namesAnObject(r.field) && isShortenedName(r.value) && decodeName(r.value).unresolved)
    .map((r) => ({ field: r.field, value: r.value }));
}
