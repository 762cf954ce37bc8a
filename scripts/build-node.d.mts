import type { BuildOptions } from 'esbuild';

/** how the fleet's Node code is bundled (format, target, packages external, ASCII output) */
export const NODE_BUNDLE: BuildOptions;

export function buildNode(
  outfile: string,
  opts?: { sourcemap?: boolean; logLevel?: 'info' | 'warning' | 'error' | 'silent' },
): Promise<string>;
