/**
 * Server-side apply's field ownership, as far as the simulator keeps it: an Apply manager owns the fields
 * of the configuration it applied (its managedFields entry's FieldsV1). Applying a value different from
 * the live one to a field another Apply manager owns is a 409 Conflict, in kube-apiserver's words
 * (`Apply failed with 1 conflict: conflict with "mgr": .data.key`, causes of type FieldManagerConflict);
 * with `force=true` the field changes hands (the other manager's entry loses it).
 *
 * Simplifications: only Apply managers own fields (an Update manager's fields never conflict), and
 * fields inside keyed list items (`k:{…}`) are owned but never conflict.
 */
import type { KubeObject } from './catalog/types.ts';
import { StatusError } from './http.ts';
import { fieldsV1 } from './patch.ts';
import { failure } from './status.ts';

type Fields = Record<string, unknown>;

/** the leaf fields of a FieldsV1 set, as paths of `f:` segments (`["data", "key"]`); keyed items skipped */
function leaves(f: Fields, at: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [k, v] of Object.entries(f)) {
    if (k === '.' || !k.startsWith('f:')) continue;
    const path = [...at, k.slice(2)];
    const sub = (v ?? {}) as Fields;
    const children = Object.keys(sub).filter((c) => c !== '.');
    if (children.length === 0) out.push(path);
    else out.push(...leaves(sub, path));
  }
  return out;
}

function valueAt(obj: unknown, path: string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function drop(f: Fields, path: string[]): void {
  const [head, ...rest] = path;
  const key = `f:${head}`;
  const sub = f[key] as Fields | undefined;
  if (!sub) return;
  if (rest.length === 0) delete f[key];
  else {
    drop(sub, rest);
    if (Object.keys(sub).every((k) => k === '.')) delete f[key];
  }
}

type Entry = Record<string, unknown>;

/**
 * Checks an apply of `applied` by `manager` over `live` (throws the 409 unless `force`), and returns the
 * managedFields to keep: with force, other Apply managers' entries without the fields taken over.
 */
export function applyOwnership(
  live: KubeObject,
  applied: KubeObject,
  manager: string,
  force: boolean,
  where: { resource: string; group: string },
): Entry[] | undefined {
  const mine = leaves(fieldsV1(applied as never));
  const entries = (live.metadata.managedFields ?? []) as Entry[];
  const conflicts: Array<{ manager: string; field: string; path: string[]; entry: Entry }> = [];
  for (const e of entries) {
    if (e['operation'] !== 'Apply' || e['manager'] === manager || (e['subresource'] ?? '') !== '') continue;
    const theirs = new Set(leaves((e['fieldsV1'] ?? {}) as Fields).map((p) => p.join('\0')));
    for (const p of mine) {
      if (!theirs.has(p.join('\0'))) continue;
      if (JSON.stringify(valueAt(applied, p)) === JSON.stringify(valueAt(live, p))) continue;
      conflicts.push({ manager: String(e['manager']), field: `.${p.join('.')}`, path: p, entry: e });
    }
  }
  if (!conflicts.length) return undefined;
  if (!force) {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.field]);
    const n = conflicts.length;
    const parts = [...byManager].map(([m, fs]) =>
      fs.length === 1
        ? `conflict with "${m}": ${fs[0]}`
        : `conflicts with "${m}":\n${fs.map((f) => `- ${f}`).join('\n')}`,
    );
    const message = `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${parts.join('\n')}`;
    throw new StatusError(
      failure(409, 'Conflict', message, {
        ...(live.metadata.name ? { name: live.metadata.name } : {}),
        ...(where.group ? { group: where.group } : {}),
        kind: where.resource,
        causes: conflicts.map((c) => ({
          reason: 'FieldManagerConflict',
          message: `conflict with "${c.manager}"`,
          field: c.field,
        })),
      }),
    );
  }
  const kept = structuredClone(entries);
  for (const c of conflicts) {
    const e = kept[entries.indexOf(c.entry)]!;
    drop((e['fieldsV1'] ?? {}) as Fields, c.path);
  }
  return kept;
}
