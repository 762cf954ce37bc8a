/**
 * Label selectors, parsed and printed the way k8s.io/apimachinery does (`pkg/labels/selector.go`), plus
 * the fleet's one rewrite, `splitClusterSelector`: terms on the label `fleet.karmada.io/cluster` pick the
 * clusters to ask and are not forwarded. Field selectors are in fields.ts; fleet names inside them are
 * rewritten by src/merge/fieldnames.ts.
 * Bad selectors throw {@link SelectorError}, whose message is kube-apiserver's text and whose `status` is
 * the 400 BadRequest to answer.
 */

import { badRequest, type Status } from './status.ts';
import { invalid, labelKeyErrors, labelValueErrors } from './validation.ts';

/** The label key that selects clusters. */
export const CLUSTER_LABEL = 'fleet.karmada.io/cluster';

/** A selector the apiserver would refuse. Map it to `status` (400 BadRequest). */
export class SelectorError extends Error {
  override readonly name = 'SelectorError';
  readonly status: Status;
  constructor(message: string) {
    super(message);
    this.status = badRequest(message);
  }
}

// ---------------------------------------------------------------------------------------------
// label selectors

export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  /** sorted, unique; [] for exists and ! */
  values: string[];
}

const Tok = {
  Error: 0,
  EOS: 1,
  ClosedPar: 2,
  Comma: 3,
  DoesNotExist: 4,
  DoubleEquals: 5,
  Equals: 6,
  GreaterThan: 7,
  Identifier: 8,
  In: 9,
  LessThan: 10,
  NotEquals: 11,
  NotIn: 12,
  OpenPar: 13,
} as const;
type Tok = (typeof Tok)[keyof typeof Tok];

const STRING_TO_TOKEN: Record<string, Tok> = {
  ')': Tok.ClosedPar,
  ',': Tok.Comma,
  '!': Tok.DoesNotExist,
  '==': Tok.DoubleEquals,
  '=': Tok.Equals,
  '>': Tok.GreaterThan,
  in: Tok.In,
  '<': Tok.LessThan,
  '!=': Tok.NotEquals,
  notin: Tok.NotIn,
  '(': Tok.OpenPar,
};

function isWhitespace(c: string): boolean {
  return c === ' ' || c === '\t' || c === '\r' || c === '\n';
}
function isSpecial(c: string): boolean {
  return c === '=' || c === '!' || c === '(' || c === ')' || c === ',' || c === '>' || c === '<';
}

/** The lexer of selector.go: "\0" reads as the end of the string, as there. */
function lex(s: string): Array<[Tok, string]> {
  const out: Array<[Tok, string]> = [];
  let pos = 0;
  const read = () => (pos < s.length ? s[pos++]! : '\0');
  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    if (ch === '\0') {
      out.push([Tok.EOS, '']);
      return out;
    }
    if (isSpecial(ch)) {
      pos--;
      let buf = '';
      let last: [Tok, string] | undefined;
      for (;;) {
        const c = read();
        if (c === '\0') break;
        if (isSpecial(c)) {
          buf += c;
          const t = STRING_TO_TOKEN[buf];
          if (t !== undefined) last = [t, buf];
          else if (last) {
            pos--;
            break;
          }
        } else {
          pos--;
          break;
        }
      }
      out.push(last ?? [Tok.Error, `error expected: keyword found '${buf}'`]);
    } else {
      pos--;
      let buf = '';
      for (;;) {
        const c = read();
        if (c === '\0') break;
        if (isSpecial(c) || isWhitespace(c)) {
          pos--;
          break;
        }
        buf += c;
      }
      const t = Object.hasOwn(STRING_TO_TOKEN, buf) ? STRING_TO_TOKEN[buf]! : Tok.Identifier;
      out.push([t, buf]);
    }
  }
}

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

class LabelParser {
  private pos = 0;
  constructor(private readonly items: Array<[Tok, string]>) {}

  private look(values: boolean): [Tok, string] {
    const [t, l] = this.items[this.pos]!;
    return [values && (t === Tok.In || t === Tok.NotIn) ? Tok.Identifier : t, l];
  }
  private take(values: boolean): [Tok, string] {
    const r = this.look(values);
    this.pos++;
    return r;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const [tok, lit] = this.look(true);
      if (tok === Tok.Identifier || tok === Tok.DoesNotExist) {
        let r: LabelRequirement;
        try {
          r = this.requirement();
        } catch (e) {
          if (e instanceof RequirementError)
            throw new SelectorError(`unable to parse requirement: ${e.message}`);
          throw e;
        }
        reqs.push(r);
        const [t, l] = this.take(true);
        if (t === Tok.EOS) return reqs;
        if (t === Tok.Comma) {
          const [t2, l2] = this.look(true);
          if (t2 !== Tok.Identifier && t2 !== Tok.DoesNotExist) {
            throw new SelectorError(`found '${l2}', expected: identifier after ','`);
          }
        } else {
          throw new SelectorError(`found '${l}', expected: ',' or 'end of string'`);
        }
      } else if (tok === Tok.EOS) {
        return reqs;
      } else {
        throw new SelectorError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private requirement(): LabelRequirement {
    // parseKeyAndInferOperator
    let op: LabelOperator | undefined;
    let [tok, key] = this.take(true);
    if (tok === Tok.DoesNotExist) {
      op = '!';
      [tok, key] = this.take(true);
    }
    if (tok !== Tok.Identifier) throw new RequirementError(`found '${key}', expected: identifier`);
    const keyErrs = labelKeyErrors(key);
    if (keyErrs.length) throw new RequirementError(invalid('<nil>', key, keyErrs.join('; ')));
    const [next] = this.look(true);
    if ((next === Tok.EOS || next === Tok.Comma) && op !== '!') op = 'exists';
    if (op === 'exists' || op === '!') return { key, operator: op, values: [] };
    // parseOperator
    const [otok, olit] = this.take(false);
    switch (otok) {
      case Tok.In:
        op = 'in';
        break;
      case Tok.Equals:
        op = '=';
        break;
      case Tok.DoubleEquals:
        op = '==';
        break;
      case Tok.GreaterThan:
        op = 'gt';
        break;
      case Tok.LessThan:
        op = 'lt';
        break;
      case Tok.NotIn:
        op = 'notin';
        break;
      case Tok.NotEquals:
        op = '!=';
        break;
      default:
        throw new RequirementError(`found '${olit}', expected: ${BINARY_OPERATORS}`);
    }
    const values = op === 'in' || op === 'notin' ? this.setValues() : this.exactValue();
    return newRequirement(key, op, [...new Set(values)].sort());
  }

  private setValues(): string[] {
    const [tok, lit] = this.take(true);
    if (tok !== Tok.OpenPar) throw new RequirementError(`found '${lit}' expected: '('`);
    const [t2, l2] = this.look(true);
    if (t2 === Tok.Identifier || t2 === Tok.Comma) {
      const s = this.identifiersList();
      if (this.take(true)[0] !== Tok.ClosedPar) throw new RequirementError(`found '${l2}', expected: ')'`);
      return s;
    }
    if (t2 === Tok.ClosedPar) {
      this.take(true);
      return [''];
    }
    throw new RequirementError(`found '${l2}', expected: ',', ')' or identifier`);
  }

  private identifiersList(): string[] {
    const s: string[] = [];
    for (;;) {
      const [tok, lit] = this.take(true);
      if (tok === Tok.Identifier) {
        s.push(lit);
        const [t2, l2] = this.look(true);
        if (t2 === Tok.Comma) continue;
        if (t2 === Tok.ClosedPar) return s;
        throw new RequirementError(`found '${l2}', expected: ',' or ')'`);
      }
      if (tok === Tok.Comma) {
        if (s.length === 0) s.push('');
        const [t2] = this.look(true);
        if (t2 === Tok.ClosedPar) {
          s.push('');
          return s;
        }
        if (t2 === Tok.Comma) s.push('');
        continue;
      }
      throw new RequirementError(`found '${lit}', expected: ',', or identifier`);
    }
  }

  private exactValue(): string[] {
    const [t] = this.look(true);
    if (t === Tok.EOS || t === Tok.Comma) return [''];
    const [tok, lit] = this.take(true);
    if (tok === Tok.Identifier) return [lit];
    throw new RequirementError(`found '${lit}', expected: identifier`);
  }
}

class RequirementError extends Error {}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

/** NewRequirement's checks on the values (the key was checked by the parser). */
function newRequirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errs: string[] = [];
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (parseInt64(v) === undefined) {
        errs.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      }
    });
  }
  values.forEach((v, i) => {
    const e = labelValueErrors(v);
    if (e.length) errs.push(invalid(`values[${i}][${key}]`, v, e.join('; ')));
  });
  if (errs.length === 1) throw new RequirementError(errs[0]);
  if (errs.length > 1) throw new RequirementError(`[${[...new Set(errs)].join(', ')}]`);
  return { key, operator, values };
}

/**
 * Parses a label selector like `labels.Parse`: requirements sorted by key (stable), values sorted and
 * unique. Throws {@link SelectorError}.
 */
export function parseLabelSelector(selector: string): LabelRequirement[] {
  if (typeof selector !== 'string') throw new SelectorError('label selector must be a string');
  const reqs = new LabelParser(lex(selector)).parse();
  return reqs
    .map((r, i) => [r, i] as const)
    .sort((a, b) => (a[0].key < b[0].key ? -1 : a[0].key > b[0].key ? 1 : a[1] - b[1]))
    .map(([r]) => r);
}

/** One requirement as `Requirement.String()` prints it. */
export function serializeLabelRequirement(r: LabelRequirement): string {
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
      return `${r.key} in (${r.values.join(',')})`;
    case 'notin':
      return `${r.key} notin (${r.values.join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0] ?? ''}`;
    case 'lt':
      return `${r.key}<${r.values[0] ?? ''}`;
    default:
      return `${r.key}${r.operator}${r.values[0] ?? ''}`;
  }
}

/** Canonical text: requirements joined by ",", in the given order (parse output is sorted by key). */
export function serializeLabelSelector(reqs: readonly LabelRequirement[]): string {
  return reqs.map(serializeLabelRequirement).join(',');
}

/** `Requirement.Matches` for a set of labels. */
export function matchesRequirement(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const v = has ? labels[r.key]! : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return v !== undefined && r.values.includes(v);
    case 'notin':
    case '!=':
      return v === undefined || !r.values.includes(v);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (v === undefined || r.values.length !== 1) return false;
      const a = parseInt64(v);
      const b = parseInt64(r.values[0]!);
      if (a === undefined || b === undefined) return false;
      return r.operator === 'gt' ? a > b : a < b;
    }
  }
}

export function matchesLabels(
  reqs: readonly LabelRequirement[],
  labels: Readonly<Record<string, string>>,
): boolean {
  return reqs.every((r) => matchesRequirement(r, labels));
}

/**
 * Splits a label selector into the clusters its `fleet.karmada.io/cluster` terms choose (of `clusters`,
 * order kept) and the rest, to forward upstream (canonical text; "" when nothing is left).
 * Throws {@link SelectorError} for an invalid selector.
 */
export function splitClusterSelector(
  selector: string | undefined | null,
  clusters: readonly string[],
): { clusters: string[]; forward: string } {
  if (!selector) return { clusters: [...clusters], forward: '' };
  const reqs = parseLabelSelector(selector);
  const mine = reqs.filter((r) => r.key === CLUSTER_LABEL);
  if (mine.length === 0) return { clusters: [...clusters], forward: serializeLabelSelector(reqs) };
  const rest = reqs.filter((r) => r.key !== CLUSTER_LABEL);
  return {
    clusters: clusters.filter((c) => matchesLabels(mine, { [CLUSTER_LABEL]: c })),
    forward: serializeLabelSelector(rest),
  };
}
