/**
 * Every function in a file with its length in lines, from a real parse (oxc-parser). A function's
 * length is from its first line (name or signature) to its closing brace, closures included: a
 * 400-line function made of ten closures is still one 400-line function to read.
 */
import { parseSync } from 'oxc-parser';
import { lineIndex } from './graph.ts';

export interface FunctionSize {
  /** `name`, `Class.method`, `outer/inner` for a named closure, `(anonymous)` when nothing names it */
  name: string;
  line: number;
  lines: number;
}

type Node = { type: string; start: number; end: number; [k: string]: unknown };

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && typeof (v as Node).type === 'string';
}

function keyName(key: unknown): string | undefined {
  if (!isNode(key)) return undefined;
  if (key.type === 'Identifier' || key.type === 'PrivateIdentifier') return String(key.name);
  if (key.type === 'Literal') return String(key.value);
  return undefined;
}

/** What names a function: its own id, or the declarator, property, method or assignment that holds it. */
function nameOf(fn: Node, parent: Node | undefined, className: string | undefined): string | undefined {
  const id = keyName(fn.id);
  if (id) return id;
  if (!parent) return undefined;
  switch (parent.type) {
    case 'VariableDeclarator':
      return keyName(parent.id);
    case 'MethodDefinition':
    case 'PropertyDefinition': {
      const k = keyName(parent.key);
      return k && className ? `${className}.${k}` : k;
    }
    case 'Property':
      return keyName(parent.key);
    case 'AssignmentExpression': {
      const left = parent.left as Node;
      return left.type === 'MemberExpression' ? keyName(left.property) : keyName(left);
    }
    default:
      return undefined;
  }
}

export function functionSizes(file: string, text: string): FunctionSize[] {
  const parsed = parseSync(file, text, { lang: file.endsWith('.ts') ? 'ts' : 'js', sourceType: 'module' });
  if (parsed.errors.length) throw new Error(`${file}: ${parsed.errors[0]!.message}`);
  const lineOf = lineIndex(text);
  const out: FunctionSize[] = [];
  const visit = (node: Node, parent: Node | undefined, className: string | undefined, outer: string[]) => {
    let cls = className;
    let names = outer;
    if (node.type === 'ClassDeclaration' || node.type === 'ClassExpression')
      cls = keyName(node.id) ?? className;
    if (FUNCTIONS.has(node.type)) {
      const own = nameOf(node, parent, cls);
      // a method's signature starts at its name, before the parameters the function node starts at
      const from =
        parent && (parent.type === 'MethodDefinition' || parent.type === 'Property') ? parent : node;
      const first = lineOf(from.start);
      const name = [...outer, own ?? '(anonymous)'].join('/');
      out.push({ name, line: first, lines: lineOf(node.end - 1) - first + 1 });
      names = [...outer, own ?? '(anonymous)'];
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === 'parent') continue;
      if (Array.isArray(v)) {
        for (const c of v) if (isNode(c)) visit(c, node, cls, names);
      } else if (isNode(v)) visit(v, node, cls, names);
    }
  };
  visit(parsed.program as unknown as Node, undefined, undefined, []);
  return out;
}
