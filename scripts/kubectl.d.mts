export function kubectlPath(): string;
export function ensureKubectl(): string;
export function helmPath(): string;
export function ensureHelm(): string;
