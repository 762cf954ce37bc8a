export function kubectlPath(): string;
export function ensureKubectl(): string;
