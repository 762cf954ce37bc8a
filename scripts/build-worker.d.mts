export function buildWorker(outfile: string): Promise<number>;
