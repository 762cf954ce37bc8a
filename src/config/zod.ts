/**
 * zod/mini (zod 4's tree-shakable API) with the fleet's conventions, for ./schema.ts and ./security.ts:
 *
 * - One issue per problem: every check here runs only on a value that passed its schema and the checks
 *   before it (`abort` and `when`; zod itself runs length checks on anything with a length, and an
 *   object's refinements past unknown keys), so a member name that is too long is not also told it is
 *   not a DNS label, and `serving: {certFile: x, typo: 1}` is told about its typo only.
 * - English messages from the issue codes (zod/mini ships none; its `en` locale would bring every
 *   message zod knows), worded as zod's own, so that errors read as they always have.
 * - `flattenIssues`: a union that accepts nothing is reported by the option that came closest (fewest
 *   issues), so `{server: 'ftp://…'}` is told about its server, not about a missing kubeconfig.
 */
import * as z from 'zod/mini';

const passed = (p: { issues: readonly unknown[] }) => p.issues.length === 0;
const stop = { abort: true, when: passed } as const;

export const gte = (n: number) => z.gte(n, stop);
export const lte = (n: number) => z.lte(n, stop);
export const positive = () => z.positive(stop);
export const minLength = (n: number) => z.minLength(n, stop);
export const maxLength = (n: number) => z.maxLength(n, stop);
export const int = () =>
  z.refine(Number.isSafeInteger, { message: 'Invalid input: expected int, received number', ...stop });
export const regex = (re: RegExp, message: string) => z.regex(re, { message, ...stop });
export const refine = <T>(fn: (v: NoInfer<T>) => boolean, message: string): z.core.$ZodCheck<T> =>
  z.refine<T>(fn, { message, ...stop });
export const superRefine = <T>(fn: (v: NoInfer<T>, ctx: RefinementCtx) => void): z.core.$ZodCheck<T> =>
  z.superRefine<T>(
    (v, ctx) => fn(v, { addIssue: (i) => ctx.addIssue({ code: 'custom', continue: false, ...i }) }),
    { when: passed },
  );

/** what a `superRefine` reports with; `path` is relative to the refined value */
export interface RefinementCtx {
  addIssue(issue: { message: string; path?: (string | number)[] }): void;
}

/**
 * an absolute URL whose scheme is http or https (zod's: `https:host` without `//` is refused; spaces,
 * tabs and newlines the URL parser would drop are dropped); a non-string is told it is not a string
 */
export const httpUrl = (message: string) =>
  z.url({
    protocol: /^https?$/,
    abort: true,
    error: (i) => (i.code === 'invalid_type' ? undefined : message),
  });

/** the input's kind as zod names it (`received …`) */
function kind(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

const quoted = (xs: readonly unknown[], sep: string) => xs.map((x) => JSON.stringify(x)).join(sep);
const oneOf = (xs: readonly unknown[]) =>
  xs.length === 1
    ? `Invalid input: expected ${quoted(xs, '')}`
    : `Invalid option: expected one of ${quoted(xs, '|')}`;

type RawIssue = Parameters<NonNullable<z.core.$ZodConfig['customError']>>[0];

/** zod's English wording for the issues the fleet's schema can raise */
export function issueMessage(i: RawIssue): string {
  switch (i.code) {
    case 'invalid_type':
      return `Invalid input: expected ${i.expected}, received ${kind(i.input)}`;
    case 'too_small':
    case 'too_big': {
      const [word, bound, op] = i.code === 'too_small' ? ['small', i.minimum, '>'] : ['big', i.maximum, '<'];
      const unit = i.origin === 'string' ? ' characters' : i.origin === 'array' ? ' items' : '';
      return `Too ${word}: expected ${i.origin} ${unit ? 'to have' : 'to be'} ${op}${i.inclusive ? '=' : ''}${bound}${unit}`;
    }
    case 'invalid_value':
      return oneOf(i.values);
    case 'unrecognized_keys':
      return `Unrecognized key${i.keys.length > 1 ? 's' : ''}: ${quoted(i.keys, ', ')}`;
    case 'invalid_union':
      // a discriminated union whose tag matches no option (other unions: see flattenIssues)
      return 'options' in i && Array.isArray(i.options) ? oneOf(i.options) : 'Invalid input';
    case 'invalid_format':
      return 'pattern' in i ? `Invalid string: must match pattern ${i.pattern}` : `Invalid ${i.format}`;
    default:
      return 'Invalid input';
  }
}

z.config({ customError: issueMessage });

export interface Issue {
  path: PropertyKey[];
  message: string;
}

/** the issues, a union's replaced by those of its closest option (the first of the closest) */
export function flattenIssues(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): Issue[] {
  return issues.flatMap((i) => {
    const path = [...prefix, ...i.path];
    if (i.code !== 'invalid_union' || !i.errors.length) return [{ path, message: i.message }];
    const best = i.errors.reduce((a, b) => (b.length < a.length ? b : a));
    return flattenIssues(best, path);
  });
}
