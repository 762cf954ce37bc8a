// The one symbol the worker entry takes from the Workers runtime module (bundled as an external import;
// @cloudflare/workers-types is not in the type-check's `types` so Node and DOM typings stay the reference).
declare module 'cloudflare:workers' {
  export abstract class WorkerEntrypoint<Env = unknown> {
    protected ctx: unknown;
    protected env: Env;
    constructor(ctx: unknown, env: Env);
    fetch?(request: Request): Response | Promise<Response>;
  }
}
