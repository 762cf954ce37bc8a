// What the worker's type-check (tsconfig.worker.json: Workers' types, no @types/node) may use of
// node:crypto, which workerd provides natively with wrangler.toml's `nodejs_compat` flag: the synchronous
// SHA-256 of shortened names (src/merge/names/hash.ts), nothing else. tsconfig.json checks the same code
// against @types/node and leaves this file out.
declare module 'node:crypto' {
  interface Hash {
    update(data: string, encoding: 'utf8'): Hash;
    digest(encoding: 'hex'): string;
  }
  export function createHash(algorithm: 'sha256'): Hash;
}
