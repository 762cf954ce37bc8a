/**
 * Field selectors as apimachinery's fields.ParseSelector reads them (`metadata.name=x,status.phase!=y`,
 * values escaped with `\\`). Errors are {@link SelectorError}s, like the label selectors'.
 */
import { SelectorError } from './selectors.ts';

export interface FieldRequirement {
  field: string;
  /** `==` parses as `=`, as in apimachinery */
  operator: '=' | '!=';
  /** unescaped */
  value: string;
}

/** EscapeValue: `\` → `\\`, `,` → `\,`, `=` → `\=`. */
export function escapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  return s.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** UnescapeValue; throws SelectorError with apimachinery's texts. */
export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c === '\\' || c === ',' || c === '=') out += c;
      else throw new SelectorError(`invalid field selector: invalid escape sequence: \\${c}`);
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') {
      // Go prints the rune with %v: its code point
      throw new SelectorError(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else out += c;
  }
  if (inSlash) throw new SelectorError('invalid field selector: invalid escape sequence: \\');
  return out;
}

function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

const TERM_OPERATORS = ['!=', '==', '='] as const;

/**
 * Parses a field selector like `fields.ParseSelector`: terms sorted (by their raw text, as there), empty
 * terms skipped, values unescaped. Throws {@link SelectorError}.
 */
export function parseFieldSelector(selector: string): FieldRequirement[] {
  if (typeof selector !== 'string') throw new SelectorError('field selector must be a string');
  const parts = splitTerms(selector).sort();
  const out: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    let found = false;
    for (let i = 0; i < part.length && !found; i++) {
      for (const op of TERM_OPERATORS) {
        if (part.startsWith(op, i)) {
          const value = unescapeFieldValue(part.slice(i + op.length));
          out.push({ field: part.slice(0, i), operator: op === '!=' ? '!=' : '=', value });
          found = true;
          break;
        }
      }
    }
    if (!found) throw new SelectorError(`invalid selector: '${selector}'; can't understand '${part}'`);
  }
  return out;
}

export function serializeFieldSelector(reqs: readonly FieldRequirement[]): string {
  return reqs.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
}

/** Fields whose values are object names the fleet shows as fleet names. */
export const NAME_FIELDS: ReadonlySet<string> = new Set(['metadata.name', 'involvedObject.name']);
