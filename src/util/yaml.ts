/**
 * What the fleet reads as YAML — its configuration (the Node file and the worker's `FLEET_CONFIG`),
 * kubeconfigs, `application/yaml` request bodies — read by js-yaml on Node (the worker bundles a JSON
 * reader in js-yaml's place, ./yaml-json.ts, through wrangler.toml's `[alias]`): one document, YAML
 * 1.2's core schema (null, bool, int, float, else string; no merge keys, as kube's own reader), duplicate
 * keys refused. Untrusted input is bounded: nesting as deep as the fleet allows JSON
 * bodies, at most 100 aliases, and a value whose aliases would expand past a million nodes when written as
 * JSON (an alias bomb shares its nodes until someone serialises it) is refused here, not in a serialiser.
 */
import { load, YAMLException } from 'js-yaml';

/** A document that could not be read; the message names the line and column. */
export class YamlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'YamlError';
  }
}

const MAX_DEPTH = 1000;
const MAX_ALIASES = 100;
const MAX_EXPANDED_NODES = 1_000_000;

/** Counts the nodes of `v` as JSON would write them (shared nodes once per reference), up to `budget`. */
function expandsPast(v: unknown, budget: number): boolean {
  let left = budget;
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (--left < 0) return true;
    if (x !== null && typeof x === 'object') {
      for (const c of Array.isArray(x) ? x : Object.values(x)) stack.push(c);
    }
  }
  return false;
}

/** Reads one YAML (or JSON) document. Throws YamlError naming the line and column of a problem. */
export function parseYaml(text: string): unknown {
  let v: unknown;
  try {
    v = load(text, { maxDepth: MAX_DEPTH, maxAliases: MAX_ALIASES });
  } catch (err) {
    if (err instanceof YAMLException) {
      const at = err.mark ? ` at line ${err.mark.line + 1}, column ${err.mark.column + 1}` : '';
      throw new YamlError(`${err.reason}${at}`);
    }
    throw err;
  }
  if (expandsPast(v, MAX_EXPANDED_NODES))
    throw new YamlError(`the document's aliases expand past ${MAX_EXPANDED_NODES} nodes`);
  return v;
}
