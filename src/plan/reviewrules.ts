/**
 * `kubectl auth can-i --list` across the fleet, pure: the SelfSubjectRulesReview statuses of every
 * cluster merged into the rules that hold in every one of them.
 *
 * The merge works on atoms: every rule of every cluster is split into one (verb, apiGroup, resource)
 * triple per combination, keeping its resourceNames (non-resource rules: one (verb, URL) pair each). An
 * atom is kept when every cluster has a rule that covers it, by RBAC's own matching (`*`, exact,
 * `*\/subresource` for resources; `*` and a trailing-`*` prefix for URLs; a rule without resourceNames
 * covers any names, one with names covers a subset). The kept atoms are grouped back into rules.
 *
 * So the answer never claims more than every cluster grants. It may claim less: when two clusters grant
 * through differently starred rules (`get *` in one, `* pods` in another) their meet (`get pods`) is not
 * computed, the same caution kube takes when it marks a rules review `incomplete`. `incomplete` is set when
 * any cluster said so, or could not be asked; `evaluationError` lists each cluster's own.
 */

type Rule = Record<string, unknown>;

interface ResourceAtom {
  verb: string;
  group: string;
  resource: string;
  names?: string[];
}

interface UrlAtom {
  verb: string;
  url: string;
}

function list(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function hasOrStar(values: string[], v: string): boolean {
  return values.includes('*') || values.includes(v);
}

/** RBAC's ResourceMatches: `*`, the exact resource, or `*\/<subresource>`. */
function resourceCovers(rule: string, atom: string): boolean {
  if (rule === '*' || rule === atom) return true;
  const slash = atom.indexOf('/');
  return slash >= 0 && rule === `*${atom.slice(slash)}`;
}

function resourceRuleCovers(r: Rule, a: ResourceAtom): boolean {
  if (!hasOrStar(list(r.verbs), a.verb) || !hasOrStar(list(r.apiGroups), a.group)) return false;
  if (!list(r.resources).some((res) => resourceCovers(res, a.resource))) return false;
  const names = list(r.resourceNames);
  if (names.length === 0) return true;
  return !!a.names && a.names.every((n) => names.includes(n));
}

/** RBAC's NonResourceURLMatches: `*`, exact, or a prefix ending in `*` (which covers narrower prefixes). */
function urlRuleCovers(r: Rule, a: UrlAtom): boolean {
  if (!hasOrStar(list(r.verbs), a.verb)) return false;
  return list(r.nonResourceURLs).some(
    (u) => u === '*' || u === a.url || (u.endsWith('*') && a.url.startsWith(u.slice(0, -1))),
  );
}

function resourceAtoms(rules: Rule[]): ResourceAtom[] {
  const out: ResourceAtom[] = [];
  for (const r of rules) {
    const names = list(r.resourceNames);
    for (const verb of list(r.verbs))
      for (const group of list(r.apiGroups))
        for (const resource of list(r.resources))
          out.push({ verb, group, resource, ...(names.length ? { names } : {}) });
  }
  return out;
}

function urlAtoms(rules: Rule[]): UrlAtom[] {
  return rules.flatMap((r) =>
    list(r.verbs).flatMap((verb) => list(r.nonResourceURLs).map((url) => ({ verb, url }))),
  );
}

/** Atoms kept (deduplicated), in the order first seen. */
function keep<A>(atoms: A[], everywhere: (a: A) => boolean, key: (a: A) => string): A[] {
  const seen = new Set<string>();
  const out: A[] = [];
  for (const a of atoms) {
    const k = key(a);
    if (seen.has(k)) continue;
    seen.add(k);
    if (everywhere(a)) out.push(a);
  }
  return out;
}

/** Kept atoms grouped back: one rule per (apiGroup, resource, names), its verbs collected. */
function resourceRules(atoms: ResourceAtom[]): Rule[] {
  const byKey = new Map<string, { group: string; resource: string; names?: string[]; verbs: string[] }>();
  for (const a of atoms) {
    const k = JSON.stringify([a.group, a.resource, a.names ?? null]);
    const e = byKey.get(k) ?? {
      group: a.group,
      resource: a.resource,
      ...(a.names ? { names: a.names } : {}),
      verbs: [],
    };
    if (!e.verbs.includes(a.verb)) e.verbs.push(a.verb);
    byKey.set(k, e);
  }
  return [...byKey.values()].map((e) => ({
    verbs: e.verbs,
    apiGroups: [e.group],
    resources: [e.resource],
    ...(e.names ? { resourceNames: e.names } : {}),
  }));
}

function urlRules(atoms: UrlAtom[]): Rule[] {
  const byVerbs = new Map<string, { verbs: string[]; urls: string[] }>();
  const perUrl = new Map<string, string[]>();
  for (const a of atoms) perUrl.set(a.url, [...(perUrl.get(a.url) ?? []), a.verb]);
  for (const [url, verbs] of perUrl) {
    const k = JSON.stringify(verbs);
    const e = byVerbs.get(k) ?? { verbs, urls: [] };
    e.urls.push(url);
    byVerbs.set(k, e);
  }
  return [...byVerbs.values()].map((e) => ({ verbs: e.verbs, nonResourceURLs: e.urls }));
}

/** One cluster's SubjectRulesReviewStatus, or why it could not be asked. */
export type RulesAnswer =
  | { cluster: string; status: Record<string, unknown> }
  | { cluster: string; failed: string };

/** The rules that hold in every cluster (see the file's comment), as a SubjectRulesReviewStatus. */
export function mergeRules(answers: readonly RulesAnswer[]): Record<string, unknown> {
  const asked = answers.filter(
    (a): a is { cluster: string; status: Record<string, unknown> } => 'status' in a,
  );
  const failed = answers.filter((a): a is { cluster: string; failed: string } => 'failed' in a);
  const res = asked.map((a) =>
    Array.isArray(a.status.resourceRules) ? (a.status.resourceRules as Rule[]) : [],
  );
  const urls = asked.map((a) =>
    Array.isArray(a.status.nonResourceRules) ? (a.status.nonResourceRules as Rule[]) : [],
  );
  const ra = keep(
    resourceAtoms(res.flat()),
    (a) => res.every((rules) => rules.some((r) => resourceRuleCovers(r, a))),
    (a) => JSON.stringify([a.verb, a.group, a.resource, a.names ?? null]),
  );
  const ua = keep(
    urlAtoms(urls.flat()),
    (a) => urls.every((rules) => rules.some((r) => urlRuleCovers(r, a))),
    (a) => `${a.verb} ${a.url}`,
  );
  const errors = [
    ...asked.flatMap((a) =>
      typeof a.status.evaluationError === 'string' && a.status.evaluationError
        ? [`${a.cluster}: ${a.status.evaluationError}`]
        : [],
    ),
    ...failed.map((a) => `${a.cluster}: could not be asked: ${a.failed}`),
  ];
  // nothing asked: no rule can be said to hold anywhere
  const incomplete =
    asked.length === 0 || failed.length > 0 || asked.some((a) => a.status.incomplete === true);
  return {
    resourceRules: asked.length ? resourceRules(ra) : [],
    nonResourceRules: asked.length ? urlRules(ua) : [],
    incomplete,
    ...(errors.length ? { evaluationError: errors.join('; ') } : {}),
  };
}
