/**
 * Label and field selectors of the simulated apiserver, written from apimachinery's behaviour
 * (`pkg/labels/selector.go`, `pkg/fields/selector.go`, `pkg/util/validation`), independent of the fleet's
 * own parser in src/kube/ (the simulator is the oracle the fleet is checked against).
 *
 * Label grammar (selector.go):
 *   selector    := requirement ("," requirement)*   |  ""
 *   requirement := ["!"] KEY [ ("in" | "notin") "(" values ")" | ("=" | "==" | "!=" | ">" | "<") VALUE ]
 * The lexer cuts identifiers at whitespace and at the symbols `= ! ( ) , > <`, takes the longest symbol
 * token, and treats `in` / `notin` as identifiers wherever a value is expected. `x in ()` and `x notin ()`
 * are accepted and mean the one value "" (parseValues inserts it), as kube does. Requirements come back
 * sorted by key. Field selectors: terms split on unescaped commas, the first `!=`, `==` or `=` splits a
 * term, values are unescaped (`\\`, `\,`, `\=`), `=` and `,` left unescaped in a value are errors.
 *
 * Every refusal is a {@link StatusError} carrying kube-apiserver's 400 BadRequest and message.
 */

import type { KubeObject } from './catalog/types.ts';
import { StatusError } from './http.ts';
import { badRequest } from './status.ts';

export type Labels = Record<string, string> | undefined;

export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  /** sorted and unique (a sets.String in Go); [] for exists and ! */
  values: string[];
}

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

export interface Selector {
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

/** Thrown inside the parser; the exported entry points turn it into a StatusError. */
class SyntaxFault extends Error {}

// ---------------------------------------------------------------------------------------------
// Go formatting and util/validation texts

const utf8 = new TextEncoder();
const byteLength = (s: string) => utf8.encode(s).length;

/** strconv.Quote: printable characters as they are, the rest escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0x80 && c < 0xa0) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else if (c >= 0xd800 && c <= 0xdfff)
      out += '\\ufffd'; // lone surrogate: Go sees invalid UTF-8
    else out += ch;
  }
  return `${out}"`;
}

/** validation.RegexError: `<msg> (e.g. 'a' or 'b', regex used for validation is '<fmt>')`. */
function regexMessage(msg: string, fmt: string, examples: string[]): string {
  const eg = examples.map((e, i) => `${i > 0 ? ' or ' : ''}'${e}', `).join('');
  return `${msg} (e.g. ${eg}regex used for validation is '${fmt}')`;
}

const QNAME = {
  fmt: '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]',
  re: /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/,
};
const QNAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QNAME_EXAMPLES = ['MyName', 'my.name', '123-abc'];
const SUBDOMAIN = {
  fmt: '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*',
  re: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
};
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const VALUE_FMT = `(${QNAME.fmt})?`;
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** IsQualifiedName (a label key): the problems, none when valid. */
export function labelKeyProblems(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2)
    return [
      `a qualified name ${regexMessage(QNAME_MSG, QNAME.fmt, QNAME_EXAMPLES)} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  const problems: string[] = [];
  const name = parts[parts.length - 1]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === '') problems.push('prefix part must be non-empty');
    else {
      if (byteLength(prefix) > 253) problems.push('prefix part must be no more than 253 characters');
      if (!SUBDOMAIN.re.test(prefix))
        problems.push(`prefix part ${regexMessage(SUBDOMAIN_MSG, SUBDOMAIN.fmt, ['example.com'])}`);
    }
  }
  if (name === '') problems.push('name part must be non-empty');
  else if (byteLength(name) > 63) problems.push('name part must be no more than 63 characters');
  if (!QNAME.re.test(name)) problems.push(`name part ${regexMessage(QNAME_MSG, QNAME.fmt, QNAME_EXAMPLES)}`);
  return problems;
}

/** IsValidLabelValue: the problems, none when valid. */
export function labelValueProblems(value: string): string[] {
  const problems: string[] = [];
  if (byteLength(value) > 63) problems.push('must be no more than 63 characters');
  if (value !== '' && !QNAME.re.test(value))
    problems.push(regexMessage(VALUE_MSG, VALUE_FMT, ['MyValue', 'my_value', '12345']));
  return problems;
}

/** field.Invalid(path, value, detail).Error() */
const invalidValue = (path: string, value: string, detail: string) =>
  `${path}: Invalid value: ${goQuote(value)}: ${detail}`;

/** utilerrors.Aggregate's Error(): one message as is, several in brackets (duplicates dropped). */
function aggregate(msgs: string[]): string {
  const unique = [...new Set(msgs)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

// ---------------------------------------------------------------------------------------------
// label selector: lexer

type Kind = 'end' | 'ident' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<';
interface Token {
  kind: Kind;
  text: string;
}

const SYMBOLS = new Set<string>(['(', ')', ',', '!', '=', '==', '!=', '>', '<']);
const SYMBOL_CHARS = '=!(),><';
const SPACE = ' \t\r\n';

/** The whole token stream, ending with `end`. A NUL character ends the input, as Go's lexer reads it. */
function tokenize(input: string): Token[] {
  const nul = input.indexOf('\0');
  const s = nul >= 0 ? input.slice(0, nul) : input;
  const out: Token[] = [];
  let i = 0;
  while (true) {
    while (i < s.length && SPACE.includes(s[i]!)) i++;
    if (i >= s.length) {
      out.push({ kind: 'end', text: '' });
      return out;
    }
    if (SYMBOL_CHARS.includes(s[i]!)) {
      // longest run of symbol characters that is still a token; every single symbol char is one
      let best = s[i]!;
      let j = i + 1;
      while (j < s.length && SYMBOL_CHARS.includes(s[j]!) && SYMBOLS.has(s.slice(i, j + 1))) {
        best = s.slice(i, j + 1);
        j++;
      }
      out.push({ kind: best as Kind, text: best });
      i += best.length;
      continue;
    }
    let j = i;
    while (j < s.length && !SPACE.includes(s[j]!) && !SYMBOL_CHARS.includes(s[j]!)) j++;
    const word = s.slice(i, j);
    out.push({ kind: word === 'in' || word === 'notin' ? word : 'ident', text: word });
    i = j;
  }
}

// ---------------------------------------------------------------------------------------------
// label selector: parser

class LabelParser {
  private at = 0;
  constructor(private readonly toks: Token[]) {}

  /** The next token; where values are expected, `in` and `notin` are plain identifiers. */
  private peek(valueContext = true): Token {
    const t = this.toks[this.at]!;
    return valueContext && (t.kind === 'in' || t.kind === 'notin') ? { kind: 'ident', text: t.text } : t;
  }
  private next(valueContext = true): Token {
    const t = this.peek(valueContext);
    if (this.at < this.toks.length - 1) this.at++;
    return t;
  }

  selector(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    let t = this.peek();
    if (t.kind === 'end') return reqs;
    while (true) {
      if (t.kind !== 'ident' && t.kind !== '!')
        throw new SyntaxFault(`found '${t.text}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.requirement());
      } catch (e) {
        if (e instanceof RequirementFault) throw new SyntaxFault(`unable to parse requirement: ${e.message}`);
        throw e;
      }
      const after = this.next();
      if (after.kind === 'end') break;
      if (after.kind !== ',')
        throw new SyntaxFault(`found '${after.text}', expected: ',' or 'end of string'`);
      t = this.peek();
      if (t.kind !== 'ident' && t.kind !== '!')
        throw new SyntaxFault(`found '${t.text}', expected: identifier after ','`);
    }
    return reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  private requirement(): LabelRequirement {
    let negated = false;
    let t = this.next();
    if (t.kind === '!') {
      negated = true;
      t = this.next();
    }
    if (t.kind !== 'ident') throw new RequirementFault(`found '${t.text}', expected: identifier`);
    const key = t.text;
    const keyProblems = labelKeyProblems(key);
    // the parser validates the key with a nil field path, which Go prints as <nil>
    if (keyProblems.length) throw new RequirementFault(invalidValue('<nil>', key, keyProblems.join('; ')));
    const la = this.peek().kind;
    if (negated) return { key, operator: '!', values: [] };
    if (la === 'end' || la === ',') return { key, operator: 'exists', values: [] };
    const op = this.next(false);
    switch (op.kind) {
      case 'in':
      case 'notin':
        return checked(key, op.kind, this.setValues());
      case '=':
      case '==':
      case '!=':
        return checked(key, op.kind, this.exactValue());
      case '>':
        return checked(key, 'gt', this.exactValue());
      case '<':
        return checked(key, 'lt', this.exactValue());
      default:
        throw new RequirementFault(`found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  private exactValue(): string[] {
    const la = this.peek();
    if (la.kind === 'end' || la.kind === ',') return [''];
    const t = this.next();
    if (t.kind === 'ident') return [t.text];
    throw new RequirementFault(`found '${t.text}', expected: identifier`);
  }

  /** `( v1, v2 )`: empty slots are the value ""; `()` alone is {""}. */
  private setValues(): string[] {
    const open = this.next();
    if (open.kind !== '(') throw new RequirementFault(`found '${open.text}' expected: '('`);
    const first = this.peek();
    if (first.kind === ')') {
      this.next();
      return [''];
    }
    if (first.kind !== 'ident' && first.kind !== ',')
      throw new RequirementFault(`found '${first.text}', expected: ',', ')' or identifier`);
    const values = new Set<string>();
    while (true) {
      const t = this.next();
      if (t.kind === 'ident') {
        values.add(t.text);
        const la = this.peek();
        if (la.kind === ')') break;
        if (la.kind !== ',') throw new RequirementFault(`found '${la.text}', expected: ',' or ')'`);
      } else if (t.kind === ',') {
        // a comma with nothing before it, or followed by `,` or `)`, stands for an empty value
        if (values.size === 0) values.add('');
        const la = this.peek().kind;
        if (la === ')') {
          values.add('');
          break;
        }
        if (la === ',') values.add('');
      } else {
        throw new RequirementFault(`found '${t.text}', expected: ',', or identifier`);
      }
    }
    // the loop stops on the lookahead `)`, consumed here
    this.next();
    return [...values];
  }
}

class RequirementFault extends Error {}

/** NewRequirement's checks on the values, with its field paths (`values[0]`, `values[0][key]`). */
function checked(key: string, operator: LabelOperator, raw: string[]): LabelRequirement {
  const values = [...new Set(raw)].sort();
  const problems: string[] = [];
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (!/^[-+]?[0-9]+$/.test(v) || !fitsInt64(v))
        problems.push(
          invalidValue(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"),
        );
    });
  }
  values.forEach((v, i) => {
    const p = labelValueProblems(v);
    if (p.length) problems.push(invalidValue(`values[${i}][${key}]`, v, p.join('; ')));
  });
  if (problems.length) throw new RequirementFault(aggregate(problems));
  return { key, operator, values };
}

function fitsInt64(v: string): boolean {
  const n = BigInt(v);
  return n >= -(2n ** 63n) && n < 2n ** 63n;
}

export function parseLabelSelector(s: string | null | undefined): LabelRequirement[] {
  if (!s) return [];
  try {
    return new LabelParser(tokenize(s)).selector();
  } catch (e) {
    if (e instanceof SyntaxFault) throw new StatusError(badRequest(e.message));
    throw e;
  }
}

/** Requirement.String(): what client-go sends for a parsed selector. */
export function printLabelRequirement(r: LabelRequirement): string {
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${r.values.join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0]}`;
    case 'lt':
      return `${r.key}<${r.values[0]}`;
    default:
      return `${r.key}${r.operator}${r.values[0]}`;
  }
}

export function printLabelSelector(reqs: readonly LabelRequirement[]): string {
  return reqs.map(printLabelRequirement).join(',');
}

export function matchLabels(reqs: readonly LabelRequirement[], labels: Labels): boolean {
  const ls = labels ?? {};
  return reqs.every((r) => {
    const has = Object.hasOwn(ls, r.key);
    const v = has ? ls[r.key]! : undefined;
    switch (r.operator) {
      case 'exists':
        return has;
      case '!':
        return !has;
      case '=':
      case '==':
      case 'in':
        return has && r.values.includes(v!);
      case '!=':
      case 'notin':
        return !has || !r.values.includes(v!);
      case 'gt':
      case 'lt': {
        if (!has || !/^[-+]?[0-9]+$/.test(v!) || !fitsInt64(v!)) return false;
        const have = BigInt(v!);
        const want = BigInt(r.values[0]!);
        return r.operator === 'gt' ? have > want : have < want;
      }
      default:
        return false;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// field selectors

/** Terms split on commas not escaped by a backslash. */
function splitFieldTerms(s: string): string[] {
  const terms: string[] = [];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

function unescapeFieldValue(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '\\') {
      const n = v[i + 1];
      if (n === undefined) throw new SyntaxFault('invalid field selector: invalid escape sequence: \\');
      if (n !== '\\' && n !== ',' && n !== '=')
        throw new SyntaxFault(
          `invalid field selector: invalid escape sequence: \\${String.fromCodePoint(v.codePointAt(i + 1)!)}`,
        );
      out += n;
      i++;
    } else if (c === ',' || c === '=') {
      // Go formats the rune with %v: its code point, not the character
      throw new SyntaxFault(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else out += c;
  }
  return out;
}

/** fields.ParseSelector, without the per-kind check. */
export function parseFieldTerms(s: string): FieldRequirement[] {
  const reqs: FieldRequirement[] = [];
  const terms = splitFieldTerms(s).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const term of terms) {
    if (term === '') continue;
    const m = /!=|==|=/.exec(term);
    if (!m) throw new SyntaxFault(`invalid selector: '${s}'; can't understand '${term}'`);
    const value = unescapeFieldValue(term.slice(m.index + m[0].length));
    reqs.push({ field: term.slice(0, m.index), operator: m[0] === '!=' ? '!=' : '=', value });
  }
  return reqs;
}

/** fieldSelector printing as client-go's fields.Selector String() does (values escaped). */
export function printFieldSelector(reqs: readonly FieldRequirement[]): string {
  return reqs.map((r) => `${r.field}${r.operator}${r.value.replace(/[\\,=]/g, (c) => `\\${c}`)}`).join(',');
}

/** Field selectors each kind supports, beyond metadata.name / metadata.namespace (pkg/registry/.../strategy.go). */
const FIELDS: Record<string, Record<string, (o: any) => string | undefined>> = {
  pods: {
    'spec.nodeName': (o) => o.spec?.nodeName ?? '',
    'spec.restartPolicy': (o) => o.spec?.restartPolicy ?? '',
    'spec.schedulerName': (o) => o.spec?.schedulerName ?? '',
    'spec.serviceAccountName': (o) => o.spec?.serviceAccountName ?? '',
    'spec.hostNetwork': (o) => String(o.spec?.hostNetwork ?? false),
    'status.phase': (o) => o.status?.phase ?? '',
    'status.podIP': (o) => o.status?.podIP ?? '',
    'status.nominatedNodeName': (o) => o.status?.nominatedNodeName ?? '',
  },
  events: {
    'involvedObject.kind': (o) => o.involvedObject?.kind ?? '',
    'involvedObject.namespace': (o) => o.involvedObject?.namespace ?? '',
    'involvedObject.name': (o) => o.involvedObject?.name ?? '',
    'involvedObject.uid': (o) => o.involvedObject?.uid ?? '',
    'involvedObject.apiVersion': (o) => o.involvedObject?.apiVersion ?? '',
    'involvedObject.resourceVersion': (o) => o.involvedObject?.resourceVersion ?? '',
    'involvedObject.fieldPath': (o) => o.involvedObject?.fieldPath ?? '',
    reason: (o) => o.reason ?? '',
    reportingComponent: (o) => o.reportingComponent ?? '',
    source: (o) => o.source?.component ?? '',
    type: (o) => o.type ?? '',
  },
  secrets: { type: (o) => o.type ?? '' },
  services: { 'spec.clusterIP': (o) => o.spec?.clusterIP ?? '', 'spec.type': (o) => o.spec?.type ?? '' },
  namespaces: { 'status.phase': (o) => o.status?.phase ?? '' },
  nodes: { 'spec.unschedulable': (o) => String(o.spec?.unschedulable ?? false) },
  replicasets: { 'status.replicas': (o) => String(o.status?.replicas ?? 0) },
  replicationcontrollers: { 'status.replicas': (o) => String(o.status?.replicas ?? 0) },
  jobs: { 'status.successful': (o) => String(o.status?.succeeded ?? 0) },
  certificatesigningrequests: { 'spec.signerName': (o) => o.spec?.signerName ?? '' },
};

/** Parses, then refuses fields this kind cannot select on, as the apiserver's field label conversion does. */
export function parseFieldSelector(s: string | null | undefined, resource: string): FieldRequirement[] {
  if (!s) return [];
  let reqs: FieldRequirement[];
  try {
    reqs = parseFieldTerms(s);
  } catch (e) {
    if (e instanceof SyntaxFault) throw new StatusError(badRequest(e.message));
    throw e;
  }
  for (const r of reqs)
    if (r.field !== 'metadata.name' && r.field !== 'metadata.namespace' && !FIELDS[resource]?.[r.field])
      throw new StatusError(
        badRequest(
          // a kind with field label conversions of its own refuses the others so; the rest get the default's words
          FIELDS[resource]
            ? `field label not supported: ${r.field}`
            : `${JSON.stringify(r.field)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
        ),
      );
  return reqs;
}

export function fieldValue(obj: KubeObject, resource: string, field: string): string {
  if (field === 'metadata.name') return obj.metadata.name ?? '';
  if (field === 'metadata.namespace') return obj.metadata.namespace ?? '';
  return FIELDS[resource]?.[field]?.(obj) ?? '';
}

export function matchFields(reqs: FieldRequirement[], obj: KubeObject, resource: string): boolean {
  for (const r of reqs) {
    const v = fieldValue(obj, resource, r.field);
    if (r.operator === '=' ? v !== r.value : v === r.value) return false;
  }
  return true;
}

export function selectorMatches(sel: Selector, obj: KubeObject, resource: string): boolean {
  return matchLabels(sel.labels, obj.metadata.labels) && matchFields(sel.fields, obj, resource);
}

export function selectorEmpty(sel: Selector): boolean {
  return sel.labels.length === 0 && sel.fields.length === 0;
}
