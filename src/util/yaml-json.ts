/**
 * What the worker bundles in place of js-yaml (wrangler.toml `[alias]`; scripts/build-worker.mjs builds the
 * same way): the part of its API src/util/yaml.ts uses, reading JSON only, with the runtime's JSON.parse.
 * js-yaml cannot be tree-shaken (≈ 45 KiB, 13% of the worker's 300 KiB budget, issue 16), and on Workers
 * what the fleet reads as YAML is JSON in practice: kubectl, Helm and client-go send JSON bodies, the
 * server-side-apply body (`application/apply-patch+yaml`) included, and an operator converts `FLEET_CONFIG`
 * and an inline kubeconfig once, before uploading them (README "Cloudflare Workers"). Node reads YAML.
 * Imported by nothing in src/: only the alias reaches it.
 */

/** js-yaml's error, as src/util/yaml.ts reads it (`reason`, no `mark`: JSON.parse's message says where) */
export class YAMLException extends Error {
  readonly mark = undefined;
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'YAMLException';
  }
}

/** One JSON document (YAML needs the Node server). */
export function load(text: string, _options?: { maxDepth?: number; maxAliases?: number }): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new YAMLException(
      `${(e as Error).message} (the worker reads JSON only: YAML needs the Node server)`,
    );
  }
}
