/**
 * Server-side field validation (`fieldValidation=Strict|Warn|Ignore`, KEP-2885) for JSON and YAML bodies of
 * built-in kinds, as kube-apiserver's strict decoder finds problems: fields the Go type does not have
 * (`unknown field "spec.replicaz"`) and keys given twice (`duplicate field "metadata.name"`). The Go types'
 * shapes are the wire schema the simulator already carries (proto/schema.json, from Kubernetes 1.35's
 * generated.proto, with each field's JSON name), so every built-in kind is covered, not only the few the
 * served OpenAPI describes in full. Custom resources keep their CRD's own rules: not checked here.
 *
 * Outcomes as handlers/create.go and update.go apply them: Strict → a 400 "… cannot be handled as a …:
 * strict decoding error: …"; Warn (the default when the parameter is absent) → one `Warning` header per
 * problem; Ignore → nothing. Protobuf bodies are never checked (protobuf has no unknown JSON fields).
 */

import { StatusError } from './http.ts';
import { message } from './proto/codec.ts';
import { messageOf } from './proto/envelope.ts';
import { badRequest, invalid } from './status.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** The directive of a write's query; absent or empty is Warn. An unknown value is kube's 422 on the options. */
export function fieldValidationOf(
  q: URLSearchParams,
  options: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
): FieldValidation {
  const v = q.get('fieldValidation') ?? '';
  if (v === '' || v === 'Warn') return 'Warn';
  if (v === 'Strict' || v === 'Ignore') return v;
  throw new StatusError(
    invalid(options, 'meta.k8s.io', '', [
      {
        reason: 'FieldValueNotSupported',
        message: `Unsupported value: "${v}": supported values: "", "Ignore", "Strict", "Warn"`,
        field: 'fieldValidation',
      },
    ]),
  );
}

type FieldDef = [number, string, string, string, string?];

/** Types whose JSON is free-form (any value), so nothing inside them is unknown. */
const OPAQUE = new Set([
  'k8s.io.apimachinery.pkg.runtime.RawExtension',
  'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1',
  'k8s.io.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
  'k8s.io.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray',
  'k8s.io.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool',
  'k8s.io.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray',
]);

/** The JSON names a message accepts, inline (embedded) messages' fields included. */
function jsonFields(type: string): Map<string, FieldDef> {
  const out = new Map<string, FieldDef>();
  for (const d of (message(type)?.fields ?? []) as FieldDef[]) {
    if (d[3].includes('i')) for (const [k, v] of jsonFields(d[2])) out.set(k, v);
    else out.set(d[4] ?? d[1], d);
  }
  return out;
}

function isWrapper(type: string): boolean {
  const f = message(type)?.fields as FieldDef[] | undefined;
  return !!f && f.length === 1 && f[0]![1] === 'items' && f[0]![3] === 'r' && !type.endsWith('List');
}

function walk(type: string, v: unknown, path: string, out: string[], prune = false): void {
  if (OPAQUE.has(type) || v === null || typeof v !== 'object') return;
  const m = message(type);
  if (!m) return; // scalars and the special types (Time, Quantity, IntOrString…)
  if (isWrapper(type)) {
    if (Array.isArray(v))
      for (const [i, x] of v.entries()) walk((m.fields[0] as FieldDef)[2], x, `${path}[${i}]`, out, prune);
    return;
  }
  if (Array.isArray(v)) return;
  const known = jsonFields(type);
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const at = path ? `${path}.${k}` : k;
    const d = known.get(k);
    if (!d) {
      if (!(path === '' && (k === 'apiVersion' || k === 'kind'))) {
        out.push(at);
        if (prune) delete (v as Record<string, unknown>)[k];
      }
      continue;
    }
    const [, , t, flags] = d;
    if (flags.includes('m')) {
      if (x && typeof x === 'object' && !Array.isArray(x))
        for (const [mk, mv] of Object.entries(x as Record<string, unknown>))
          walk(t, mv, `${at}.${mk}`, out, prune);
    } else if (flags.includes('r')) {
      if (Array.isArray(x)) for (const [i, e] of x.entries()) walk(t, e, `${at}[${i}]`, out, prune);
    } else walk(t, x, at, out, prune);
  }
}

/** Paths of the fields of a JSON object its kind's Go type does not have; undefined for kinds without a schema. */
export function unknownFields(apiVersion: string, kind: string, obj: unknown): string[] | undefined {
  const type = messageOf(apiVersion, kind);
  if (!type) return undefined;
  const out: string[] = [];
  walk(type, obj, '', out);
  return out;
}

/** Drops the fields its kind's Go type does not have, as decoding into that type does (kinds without a schema: kept). */
export function pruneUnknownFields(apiVersion: string, kind: string, obj: unknown): void {
  const type = messageOf(apiVersion, kind);
  if (type) walk(type, obj, '', [], true);
}

/**
 * Paths of keys given twice in a JSON text (the strict decoder's duplicate fields), in document order.
 * A text that is not JSON yields nothing (its parse error is reported elsewhere).
 */
export function duplicateFields(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const value = (path: string, depth: number): void => {
    if (depth > 10_000) throw new Error('too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const k = str();
        const at = path ? `${path}.${k}` : k;
        if (seen.has(k)) out.push(at);
        seen.add(k);
        ws();
        i++; // ':'
        value(at, depth + 1);
        ws();
        if (text[i] === ',') i++;
        else {
          i++;
          return;
        }
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        value(`${path}[${n}]`, depth + 1);
        ws();
        if (text[i] === ',') i++;
        else {
          i++;
          return;
        }
      }
    } else if (c === '"') str();
    else while (i < text.length && !',}] \t\n\r'.includes(text[i]!)) i++;
  };
  try {
    value('', 0);
  } catch {
    return [];
  }
  return out;
}

/**
 * Applies the directive to a decoded create or update body of a built-in kind: throws Strict's 400, or
 * returns the Warning texts (Warn) — none for Ignore or a clean body.
 */
export function checkFields(
  directive: FieldValidation,
  apiVersion: string,
  kind: string,
  obj: unknown,
  text: string | undefined,
): string[] {
  if (directive === 'Ignore') return [];
  const unknown = unknownFields(apiVersion, kind, obj);
  if (!unknown) return [];
  const problems = [
    ...(text === undefined ? [] : duplicateFields(text).map((p) => `duplicate field "${p}"`)),
    ...unknown.map((p) => `unknown field "${p}"`),
  ];
  if (problems.length === 0) return [];
  if (directive === 'Warn') return problems;
  const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
  throw new StatusError(
    badRequest(
      `${kind} in version "${version}" cannot be handled as a ${kind}: strict decoding error: ${problems.join(', ')}`,
    ),
  );
}

/** The `Warning` header value of one problem, as k8s.io/apiserver's warning recorder writes it. */
export function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}

const isMap = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);

/**
 * The patched object as json-patch's merge writes it: the objects the patch reached are re-marshalled as Go
 * maps (keys sorted), the subtrees it did not touch keep the bytes they were read as.
 */
function touchedSorted(v: unknown, patch: unknown): unknown {
  if (!isMap(v) || !isMap(patch)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, k in patch ? touchedSorted(v[k], patch[k]) : v[k]]),
  );
}

/** Go's `%+v` of a decoded JSON value (map keys sorted), as kube quotes a strategic merge patch it refuses. */
function goValue(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (typeof v === 'object')
    return `map[${Object.keys(v as object)
      .sort()
      .map((k) => `${k}:${goValue((v as Record<string, unknown>)[k])}`)
      .join(' ')}]`;
  return String(v);
}

/**
 * Applies the directive to a JSON, merge or strategic merge patch (handlers/patch.go): problems are the
 * patch body's duplicate keys (merge and strategic) and the patched object's unknown fields. Strict is a
 * 422 on field `patch` whose value is the patched object (JSON and merge patches) or the patch as Go
 * prints it (strategic); Warn returns the Warning texts. Server-side apply is not checked here.
 */
export function checkPatchFields(
  directive: FieldValidation,
  apiVersion: string,
  kind: string,
  patchType: string,
  patchText: string,
  patched: unknown,
): string[] {
  if (directive === 'Ignore') return [];
  const unknown = unknownFields(apiVersion, kind, patched);
  if (!unknown) return [];
  const dups = patchType === 'application/json-patch+json' ? [] : duplicateFields(patchText);
  const problems = [
    ...dups.map((p) => `duplicate field "${p}"`),
    ...unknown.map((p) => `unknown field "${p}"`),
  ];
  if (problems.length === 0) return [];
  if (directive === 'Warn') return problems;
  let shown: string;
  if (patchType === 'application/strategic-merge-patch+json') {
    try {
      shown = goValue(JSON.parse(patchText));
    } catch {
      shown = patchText;
    }
  } else if (patchType === 'application/merge-patch+json') {
    let patch: unknown;
    try {
      patch = JSON.parse(patchText);
    } catch {
      patch = undefined;
    }
    shown = JSON.stringify(touchedSorted(patched, patch));
  } else shown = JSON.stringify(patched);
  const st = invalid('', '', '', [
    {
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${JSON.stringify(shown)}: strict decoding error: ${problems.join(', ')}`,
      field: 'patch',
    },
  ]);
  // an empty kind is left out of the details, as Go's omitempty does
  delete st.details?.kind;
  throw new StatusError(st);
}
