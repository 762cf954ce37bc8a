export const WASM_DIR: string;
export function assemble(name: string, text: string): Promise<Uint8Array>;
