/**
 * A small schema checker for the fleet's configuration: the subset of zod's API that ./schema.ts and
 * ./security.ts use (objects, strings, numbers, arrays, records, enums, unions, defaults, refinements),
 * with the same static types (`output<typeof s>`, `input<typeof s>`) and one issue per problem, each with
 * its path. It exists because the worker bundle has a size budget (≈ 3 KiB minified here, against ≈ 96 KiB
 * for zod); the configuration is read once per process, so nothing here needs to be fast.
 *
 * Semantics, as zod 4's: `default(v)` answers a copy of v for an absent value without checking it,
 * `prefault(v)` checks v in place of an absent value; an object drops unknown keys unless `strict()`
 * (an issue per object naming them) or `passthrough()` (kept); an absent key whose schema allows
 * `undefined` stays absent. Refinements run only on a value that passed its own schema.
 */

export type Path = (string | number)[];
export interface Issue {
  path: Path;
  message: string;
}
/** what `superRefine` gets to report with; `path` is relative to the refined value */
export interface RefinementCtx {
  addIssue(issue: { code?: string; message: string; path?: Path }): void;
}

/** Thrown by `parse`; `issues` as zod's. */
export class CheckError extends Error {
  constructor(readonly issues: Issue[]) {
    super(issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'));
  }
}

const FAIL: unique symbol = Symbol('fail');
type Out<T> = T | typeof FAIL;

function kind(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

export type output<S> = S extends Schema<infer O, unknown> ? O : never;
export type input<S> = S extends Schema<unknown, infer I> ? I : never;
export type infer<S> = output<S>;

type Runner<O> = (v: unknown, path: Path, issues: Issue[]) => Out<O>;

export class Schema<O, I = O> {
  declare readonly _o: O;
  declare readonly _i: I;
  constructor(readonly run: Runner<O>) {}

  safeParse(v: unknown): { success: true; data: O } | { success: false; error: CheckError } {
    const issues: Issue[] = [];
    const r = this.run(v, [], issues);
    return issues.length || r === FAIL
      ? { success: false, error: new CheckError(issues) }
      : { success: true, data: r };
  }

  parse(v: unknown): O {
    const r = this.safeParse(v);
    if (!r.success) throw r.error;
    return r.data;
  }

  optional(): Schema<O | undefined, I | undefined> {
    return new Schema<O | undefined, I | undefined>((v, p, is) =>
      v === undefined ? undefined : this.run(v, p, is),
    );
  }

  default(d: NoInfer<Exclude<O, undefined>>): Schema<Exclude<O, undefined>, I | undefined> {
    return new Schema((v, p, is) => (v === undefined ? structuredClone(d) : this.run(v, p, is))) as never;
  }

  prefault(d: NoInfer<I>): Schema<O, I | undefined> {
    return new Schema((v, p, is) => this.run(v === undefined ? d : v, p, is));
  }

  superRefine(f: (v: O, ctx: RefinementCtx) => void): this {
    return this.with((v, p, is) =>
      f(v, { addIssue: (i) => is.push({ path: [...p, ...(i.path ?? [])], message: i.message }) }),
    );
  }

  refine(f: (v: O) => boolean, opts: string | { message: string; path?: Path }): this {
    const o = typeof opts === 'string' ? { message: opts } : opts;
    return this.superRefine((v, ctx) => {
      if (!f(v)) ctx.addIssue(o);
    });
  }

  /** a copy of this schema that also runs `check` on a value that passed it */
  protected with(check: (v: O, path: Path, issues: Issue[]) => void): this {
    const next = Object.create(Object.getPrototypeOf(this)) as this;
    Object.assign(next, this);
    (next as { run: Runner<O> }).run = (v, p, is) => {
      const n = is.length;
      const r = this.run(v, p, is);
      if (r !== FAIL && is.length === n) check(r, p, is);
      return r;
    };
    return next;
  }
}

/** `min`/`max` for strings (length), arrays (items) and numbers (value), with zod's wording */
class Sized<O extends { length: number } | number, I = O> extends Schema<O, I> {
  constructor(
    run: Runner<O>,
    private readonly what: string,
  ) {
    super(run);
  }
  private bound(n: number, below: boolean, strict = false): this {
    const num = this.what === 'number';
    const op = `${below ? '>' : '<'}${strict ? '' : '='}`;
    return this.with((v, p, is) => {
      const x = typeof v === 'number' ? v : (v as { length: number }).length;
      if (below ? (strict ? x <= n : x < n) : x > n)
        is.push({
          path: p,
          message: `Too ${below ? 'small' : 'big'}: expected ${this.what} ${num ? 'to be' : 'to have'} ${op}${n}${num ? '' : this.what === 'array' ? ' items' : ' characters'}`,
        });
    });
  }
  min(n: number): this {
    return this.bound(n, true);
  }
  max(n: number): this {
    return this.bound(n, false);
  }
  positive(): this {
    return this.bound(0, true, true);
  }
  int(): this {
    return this.with((v, p, is) => {
      if (!Number.isSafeInteger(v))
        is.push({ path: p, message: 'Invalid input: expected int, received number' });
    });
  }
  regex(re: RegExp, message = `Invalid string: must match pattern ${re}`): this {
    return this.with((v, p, is) => {
      if (!re.test(v as string)) is.push({ path: p, message });
    });
  }
}

function typed<O>(what: string, ok: (v: unknown) => boolean): Runner<O> {
  return (v, p, is) => {
    if (ok(v)) return v as O;
    is.push({ path: p, message: `Invalid input: expected ${what}, received ${kind(v)}` });
    return FAIL;
  };
}

export const string = () =>
  new Sized<string>(
    typed('string', (v) => typeof v === 'string'),
    'string',
  );
export const number = () =>
  new Sized<number>(
    typed('number', (v) => typeof v === 'number' && Number.isFinite(v)),
    'number',
  );
export const boolean = () => new Schema<boolean>(typed('boolean', (v) => typeof v === 'boolean'));
export const unknown = () => new Schema<unknown>((v) => v);

/** an absolute URL whose scheme (without the colon) matches `protocol` */
export function url(opts: { protocol: RegExp; error: string }): Schema<string> {
  return string().refine((v) => {
    try {
      return opts.protocol.test(new URL(v).protocol.slice(0, -1));
    } catch {
      return false;
    }
  }, opts.error);
}

export class Literal<const L extends string> extends Schema<L> {
  constructor(readonly value: L) {
    super((v, p, is) => {
      if (v === value) return value;
      is.push({ path: p, message: `Invalid input: expected ${JSON.stringify(value)}` });
      return FAIL;
    });
  }
}
export const literal = <const L extends string>(l: L) => new Literal(l);

const oneOf = (xs: readonly string[]) =>
  `Invalid option: expected one of ${xs.map((x) => JSON.stringify(x)).join('|')}`;

function enum_<const E extends readonly string[]>(values: E): Schema<E[number]> {
  return new Schema((v, p, is) => {
    if (values.includes(v as string)) return v as E[number];
    is.push({ path: p, message: oneOf(values) });
    return FAIL;
  });
}

export { enum_ as enum };

export function array<S extends Schema<unknown, unknown>>(item: S): Sized<output<S>[], input<S>[]> {
  return new Sized<output<S>[], input<S>[]>((v, p, is) => {
    if (!Array.isArray(v)) return typed('array', () => false)(v, p, is) as never;
    // Array.from, not map: a hole is an absent item (undefined), never skipped
    const out = Array.from(v, (x, i) => item.run(x, [...p, i], is));
    return out.includes(FAIL) ? FAIL : (out as output<S>[]);
  }, 'array');
}

export function record<V extends Schema<unknown, unknown>>(
  key: Schema<string>,
  value: V,
): Schema<Record<string, output<V>>, Record<string, input<V>>> {
  return new Schema((v, p, is) => {
    if (!isPlain(v)) return typed('record', () => false)(v, p, is) as never;
    const out: Record<string, unknown> = {};
    let ok = true;
    for (const [k, x] of Object.entries(v)) {
      const kk = key.run(k, [...p, k], is);
      const r = value.run(x, [...p, k], is);
      if (kk === FAIL || r === FAIL) ok = false;
      else out[k] = r;
    }
    return ok ? (out as Record<string, output<V>>) : FAIL;
  });
}

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

type Shape = Record<string, Schema<unknown, unknown>>;
type Flat<T> = { [K in keyof T]: T[K] } & {};
type Opt<S extends Shape, W extends '_o' | '_i'> = {
  [K in keyof S]: undefined extends S[K][W] ? K : never;
}[keyof S];
type ObjOf<S extends Shape, W extends '_o' | '_i'> = Flat<
  { [K in Exclude<keyof S, Opt<S, W>>]: S[K][W] } & { [K in Opt<S, W>]?: S[K][W] }
>;

export class ObjectSchema<S extends Shape, O = ObjOf<S, '_o'>, I = ObjOf<S, '_i'>> extends Schema<O, I> {
  constructor(
    readonly shape: S,
    unknownKeys: 'strip' | 'strict' | 'passthrough' = 'strip',
  ) {
    super((v, p, is) => {
      if (!isPlain(v)) return typed('object', () => false)(v, p, is) as never;
      const out: Record<string, unknown> = unknownKeys === 'passthrough' ? { ...v } : {};
      let ok = true;
      for (const k in shape) {
        const r = shape[k]!.run(v[k], [...p, k], is);
        if (r === FAIL) ok = false;
        else if (r !== undefined || k in v) out[k] = r;
      }
      const extra = Object.keys(v).filter((k) => !(k in shape));
      if (unknownKeys === 'strict' && extra.length) {
        is.push({
          path: p,
          message: `Unrecognized key${extra.length > 1 ? 's' : ''}: ${extra.map((k) => JSON.stringify(k)).join(', ')}`,
        });
        ok = false;
      }
      return ok ? (out as O) : FAIL;
    });
  }
  strict(): ObjectSchema<S, O, I> {
    return new ObjectSchema(this.shape, 'strict');
  }
  passthrough(): ObjectSchema<S, O & Record<string, unknown>, I & Record<string, unknown>> {
    return new ObjectSchema(this.shape, 'passthrough');
  }
}

export const object = <S extends Shape>(shape: S) => new ObjectSchema(shape);

/**
 * The first option that accepts the value; when none does, the issues of the option that came closest
 * (fewest issues), so `{server: 'ftp://…'}` is told about its server, not about a missing kubeconfig.
 */
export function union<const T extends readonly Schema<unknown, unknown>[]>(
  options: T,
): Schema<output<T[number]>, input<T[number]>> {
  return new Schema<output<T[number]>, input<T[number]>>((v, p, is) => {
    let best: Issue[] | undefined;
    for (const o of options) {
      const mine: Issue[] = [];
      const r = o.run(v, p, mine);
      if (r !== FAIL && !mine.length) return r as never;
      if (!best || mine.length < best.length) best = mine;
    }
    is.push(...(best ?? []));
    return FAIL;
  });
}

/** objects told apart by one literal field (`mode: karmada | static`) */
export function discriminatedUnion<
  K extends string,
  const T extends readonly ObjectSchema<Record<K, Literal<string>>, unknown, unknown>[],
>(key: K, options: T): Schema<output<T[number]>, input<T[number]>> {
  const tags = options.map((o) => o.shape[key].value);
  return new Schema<output<T[number]>, input<T[number]>>((v, p, is) => {
    if (!isPlain(v)) return typed('object', () => false)(v, p, is) as never;
    const i = tags.indexOf(v[key] as string);
    if (i >= 0) return options[i]!.run(v, p, is) as never;
    is.push({ path: [...p, key], message: oneOf(tags) });
    return FAIL;
  });
}
