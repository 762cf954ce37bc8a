import type { BuildOptions } from 'esbuild';
export const WORKER_BUILD: BuildOptions;
export function buildWorker(outfile: string): Promise<number>;
export const WORKER_COMPATIBILITY: {
  compatibilityDate: string;
  compatibilityFlags: string[];
  modulesRules: { type: 'CompiledWasm'; include: string[] }[];
};
