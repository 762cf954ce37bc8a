/**
 * Drift: how a member's copy differs from what Karmada applied to it (its Work's manifest, which is the
 * template after Karmada's overrides and replica division). Pure.
 *
 * Only what the manifest says is compared, field by field: what the member owns is never drift:
 * `status`, the identity and bookkeeping of `metadata` (uid, resourceVersion, generation, managedFields,
 * timestamps, owner references…), labels and annotations the member or Karmada added, and every field
 * the member's defaulting filled in (absent from the manifest, so never looked at). A manifest value that
 * is empty (`{}`, `[]`, `null`, `""`) matches a field the member dropped, as kube-apiserver drops them.
 * Lists compare element by element (a container list in the same order); a list of another length
 * is one difference at the list itself.
 */

export interface Difference {
  /** the field, as kubectl's JSONPath-like paths read: `spec.template.spec.containers[0].image` */
  path: string;
  /** the value Karmada applied (undefined: the manifest does not have it) */
  template: unknown;
  /** the value in the member (undefined: the member's copy does not have it) */
  member: unknown;
}

/** metadata fields compared: only what a template sets and a member may change by hand */
const METADATA_COMPARED = ['labels', 'annotations'];

/** Every difference between `manifest` and the member's `live` copy (none: in sync). */
export function driftOf(manifest: unknown, live: unknown): Difference[] {
  const out: Difference[] = [];
  if (!isObject(manifest) || !isObject(live)) {
    if (!sameScalar(manifest, live)) out.push({ path: '', template: manifest, member: live });
    return out;
  }
  for (const [key, want] of Object.entries(manifest)) {
    if (key === 'status' || key === 'apiVersion' || key === 'kind') continue;
    if (key === 'metadata') {
      if (!isObject(want)) continue;
      const got = isObject(live.metadata) ? live.metadata : {};
      for (const k of METADATA_COMPARED) if (k in want) compare(want[k], got[k], `metadata.${k}`, out, true);
      continue;
    }
    compare(want, live[key], key, out, false);
  }
  return out;
}

function compare(want: unknown, got: unknown, path: string, out: Difference[], keyed: boolean): void {
  if (got === undefined && isEmpty(want)) return;
  if (isObject(want)) {
    if (!isObject(got)) {
      out.push({ path, template: want, member: got });
      return;
    }
    for (const [k, w] of Object.entries(want)) compare(w, got[k], fieldPath(path, k, keyed), out, false);
    return;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) {
      out.push({ path, template: want, member: got });
      return;
    }
    want.forEach((w, i) => {
      compare(w, got[i], `${path}[${i}]`, out, false);
    });
    return;
  }
  if (!sameScalar(want, got)) out.push({ path, template: want, member: got });
}

/** Keys of labels and annotations hold dots and slashes: they are written in brackets. */
function fieldPath(parent: string, key: string, keyed: boolean): string {
  if (keyed || !/^[A-Za-z_$][\w$-]*$/.test(key)) return `${parent}[${JSON.stringify(key)}]`;
  return `${parent}.${key}`;
}

function sameScalar(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // an int-or-string written one way and stored the other (a port, a percentage) is the same value
  return (
    (typeof a === 'number' || typeof a === 'string') &&
    (typeof b === 'number' || typeof b === 'string') &&
    String(a) === String(b)
  );
}

function isEmpty(v: unknown): boolean {
  if (v === null || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && Object.keys(v).length === 0;
}

function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One line per difference, as the plugin and the docs print it. */
export function describeDifference(d: Difference): string {
  const show = (v: unknown) => (v === undefined ? '(absent)' : JSON.stringify(v));
  return `${d.path}: template ${show(d.template)}, member ${show(d.member)}`;
}
