export function buildNode(
  outfile: string,
  opts?: { sourcemap?: boolean; logLevel?: 'info' | 'warning' | 'error' | 'silent' },
): Promise<string>;
