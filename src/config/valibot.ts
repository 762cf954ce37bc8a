/**
 * valibot (modular: the worker bundles only the schemas and actions used) with the fleet's conventions,
 * for ./schema.ts and ./security.ts. The messages are worded as zod's were before valibot replaced it
 * (issue 16: the smaller worker bundle), so errors read as they always have:
 *
 * - One issue per problem: every parse stops a value's checks at its first issue (`abortPipeEarly`; a
 *   value's checks run only once it has its type), so a member name that is too long is not also told it
 *   is not a DNS label, an object's refinements run only when nothing inside it failed, and
 *   `serving: {certFile: x, typo: 1}` is told about its typo only.
 * - English messages from the issues (`issueMessage`), zod's wording: `Invalid input: expected string,
 *   received number`, `Too small: expected string to have >=1 characters`, `Unrecognized keys: "a", "b"`.
 * - Objects: a required key that is absent is told what its schema would say of `undefined`; an array is
 *   not an object (nor a record); unknown keys are refused in one issue naming them all (`strict`), kept
 *   (`loose`) or dropped (`object`).
 * - `union`: the first option that accepts; else the issues of the option that came closest (fewest
 *   issues, the first of a tie), so `{server: 'ftp://…'}` is told about its server, not about a missing
 *   kubeconfig.
 * - A schema from `parsing` parses itself: `.parse(x)` (throws) and `.safeParse(x)`, with the above.
 */
import * as v from 'valibot';

type Schema = v.GenericSchema;
type RawIssue = v.BaseIssue<unknown>;
type Path = NonNullable<RawIssue['path']>;

/** the config every parse runs with */
const CONFIG: v.Config<RawIssue> = { abortPipeEarly: true, message: (i) => issueMessage(i) };

/** the input's kind as zod named it (`received …`) */
function kind(x: unknown): string {
  if (typeof x === 'number' && !Number.isFinite(x)) return String(x);
  return x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x;
}

const quoted = (xs: readonly unknown[], sep: string) => xs.map((x) => JSON.stringify(x)).join(sep);
const oneOf = (xs: readonly unknown[]) =>
  xs.length === 1
    ? `Invalid input: expected ${quoted(xs, '')}`
    : `Invalid option: expected one of ${quoted(xs, '|')}`;
const typeMessage = (expected: string, input: unknown) =>
  `Invalid input: expected ${expected}, received ${kind(input)}`;

function bound(i: RawIssue, word: 'small' | 'big', op: string): string {
  const origin = typeof i.input === 'string' ? 'string' : Array.isArray(i.input) ? 'array' : 'number';
  const unit = origin === 'string' ? ' characters' : origin === 'array' ? ' items' : '';
  return `Too ${word}: expected ${origin} ${unit ? 'to have' : 'to be'} ${op}${String(i.requirement)}${unit}`;
}

/** zod's English wording for the issues the fleet's schemas can raise (those without their own message) */
export function issueMessage(i: RawIssue): string {
  switch (i.type) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'array':
      return typeMessage(i.type, i.input);
    case 'finite':
      return typeMessage('number', i.input);
    case 'literal':
      return `Invalid input: expected ${i.expected}`;
    case 'min_length':
      return bound(i, 'small', '>=');
    case 'max_length':
      return bound(i, 'big', '<=');
    case 'min_value':
      return bound(i, 'small', '>=');
    case 'max_value':
      return bound(i, 'big', '<=');
    case 'gt_value':
      return bound(i, 'small', '>');
    default:
      return 'Invalid input';
  }
}

/** a value that is an object and not an array, told otherwise as `expected <what>` */
const objectLike = <T>(what: 'object' | 'record') =>
  v.custom<T>(
    (x) => typeof x === 'object' && x !== null && !Array.isArray(x),
    (i) => typeMessage(what, i.input),
  );

/** what `schema` says of `undefined` (an absent required key), as its own first issue */
function absentMessage(schema: Schema): string {
  const r = v.safeParse(schema, undefined, CONFIG);
  return r.issues?.[0]?.message ?? 'Invalid input';
}

type Entries = v.ObjectEntries;

/** the message of an object's own issues: an absent key, or its unknown keys (all of them) */
function objectMessage(entries: Entries) {
  return (i: RawIssue) => {
    const at = i.path?.[0] as { key: string; input: Record<string, unknown> } | undefined;
    if (!at) return typeMessage('object', i.input);
    if (i.expected !== 'never') return absentMessage(entries[at.key] as Schema);
    const keys = Object.keys(at.input).filter((k) => !Object.hasOwn(entries, k));
    return `Unrecognized key${keys.length > 1 ? 's' : ''}: ${quoted(keys, ', ')}`;
  };
}

/** an option of a `variant` whose unknown keys are refused (the variant checks that it is an object) */
export const strictOption = <E extends Entries>(entries: E) =>
  v.strictObject(entries, objectMessage(entries));
/** an object whose unknown keys are refused, in one issue */
export const strict = <E extends Entries>(entries: E) =>
  v.pipe(objectLike<v.InferInput<v.ObjectSchema<E, undefined>>>('object'), strictOption(entries));
/** an object whose unknown keys are kept */
export const loose = <E extends Entries>(entries: E) =>
  v.pipe(
    objectLike<v.InferInput<v.LooseObjectSchema<E, undefined>>>('object'),
    v.looseObject(entries, objectMessage(entries)),
  );
/** an object whose unknown keys are dropped */
export const object = <E extends Entries>(entries: E) =>
  v.pipe(
    objectLike<v.InferInput<v.ObjectSchema<E, undefined>>>('object'),
    v.object(entries, objectMessage(entries)),
  );
/** string keys to values of `value` */
export const record = <S extends Schema>(value: S) =>
  v.pipe(objectLike<Record<string, v.InferInput<S>>>('record'), v.record(v.string(), value));
/** a finite number (YAML's `.inf` is not one) */
export const number = () => v.pipe(v.number(), v.finite());
/** one of `values` */
export const picklist = <const T extends readonly string[]>(values: T) =>
  v.picklist(values, () => oneOf(values));

/** objects told apart by their `key` literal (each option a `strictOption`) */
export function variant<const K extends string, const O extends v.VariantOptions<K>>(key: K, options: O) {
  const values = options.map(
    (o) =>
      ((o as unknown as { entries: Entries }).entries[key] as v.LiteralSchema<v.Literal, undefined>).literal,
  );
  return v.pipe(
    objectLike<v.InferInput<O[number]>>('object'),
    v.variant(key, options, () => oneOf(values)),
  );
}

/** the first option that accepts; else the issues of the closest option (fewest, the first of a tie) */
export function union<const O extends readonly Schema[]>(
  options: O,
): v.GenericSchema<v.InferInput<O[number]>, v.InferOutput<O[number]>> {
  return v.pipe(
    v.unknown(),
    v.rawTransform(({ dataset }) => {
      let best: RawIssue[] | undefined;
      for (const o of options) {
        const r = v.safeParse(o, dataset.value, CONFIG);
        if (r.success) return r.output;
        if (!best || r.issues.length < best.length) best = r.issues;
      }
      dataset.issues = best as never;
      return undefined;
    }),
  ) as never;
}

// checks: each runs only on a value that has its type and passed the checks before it (CONFIG)
export const gte = (n: number) => v.minValue<number, number>(n);
export const lte = (n: number) => v.maxValue<number, number>(n);
export const positive = () => v.gtValue<number, 0>(0);
export const minLength = <T extends v.LengthInput>(n: number) => v.minLength<T, number>(n);
export const maxLength = <T extends v.LengthInput>(n: number) => v.maxLength<T, number>(n);
export const int = () =>
  v.check<number, string>(Number.isSafeInteger, 'Invalid input: expected int, received number');
export const regex = (re: RegExp, message: string) => v.regex<string, string>(re, message);
// a check written for a wider type than the value's (an endpoint's check on a member, an endpoint with a
// name) checks that value: T is the value's type (from the pipe), U the one the check reads
export const refine = <T extends U, U = T>(
  fn: (x: U) => boolean,
  message: string,
): v.CheckAction<T, string> => v.check<T, string>(fn, message);

/** what a `superRefine` reports with; `path` is relative to the refined value */
export interface RefinementCtx {
  addIssue(issue: { message: string; path?: (string | number)[] }): void;
}

/** a refinement that may report several issues, each with its own message and path */
export const superRefine = <T extends U, U = T>(
  fn: (x: U, ctx: RefinementCtx) => void,
): v.RawCheckAction<T> =>
  v.rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    fn(dataset.value, {
      addIssue: ({ message, path }) =>
        addIssue({
          message,
          ...(path?.length ? { path: path.map((key) => ({ key })) as unknown as Path } : {}),
        }),
    });
  });

function parses(url: string): boolean {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

/**
 * an absolute URL whose scheme is http or https, written with `//` (`https:host` is refused), spaces at
 * its ends and the tabs and newlines the URL parser would drop removed; a non-string is told it is not one
 */
export const httpUrl = (message: string) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.check((s) => /^https?:\/\//i.test(s) && parses(s), message),
    v.transform((s) => s.replace(/[\t\n\r]/g, '')),
  );

export interface Issue {
  path: PropertyKey[];
  message: string;
}

/** the issues as paths and messages; an object's unknown keys are the object's issue, not a key's */
export function flattenIssues(issues: readonly RawIssue[]): Issue[] {
  return issues.map((i) => {
    const path = (i.path ?? []).map((p) => p.key as PropertyKey);
    if (i.expected === 'never' && i.path?.at(-1)?.origin === 'key') path.pop();
    return { path, message: i.message };
  });
}

export type SafeParse<T> = { success: true; data: T } | { success: false; error: { issues: RawIssue[] } };

export type Parsing<S extends Schema> = S & {
  /** the value as the schema outputs it; throws an Error with every issue when it has any */
  parse(x: unknown): v.InferOutput<S>;
  safeParse(x: unknown): SafeParse<v.InferOutput<S>>;
};

/** `schema`, able to parse with the fleet's conventions */
export function parsing<S extends Schema>(schema: S): Parsing<S> {
  const safeParse = (x: unknown): SafeParse<v.InferOutput<S>> => {
    const r = v.safeParse(schema, x, CONFIG);
    return r.success ? { success: true, data: r.output } : { success: false, error: { issues: r.issues } };
  };
  return Object.assign(schema, {
    safeParse,
    parse(x: unknown) {
      const r = safeParse(x);
      if (r.success) return r.data;
      throw new Error(
        flattenIssues(r.error.issues)
          .map((i) => `${i.path.map(String).join('.')}: ${i.message}`)
          .join('\n'),
      );
    },
  });
}

export type { InferInput, InferOutput } from 'valibot';
export { array, boolean, literal, optional, pipe, string, unknown } from 'valibot';
