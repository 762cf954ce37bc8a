/**
 * The app's route tables (src/app.ts: the probes before the chain, the fleet's own endpoints behind it).
 * Their routes are exact paths and `/*` (every path), so a match is a string compare per route, in the
 * order the routes were added. It stands where hono's routers would (their tries and regular expressions
 * serve patterns the app never writes: 3.7 KiB of the worker bundle, issue 16); a pattern it cannot match
 * exactly is refused when it is added, never matched wrongly.
 */
export class ExactRouter<T> {
  private readonly routes: Array<[method: string, path: string, handler: T]> = [];

  add(method: string, path: string, handler: T): void {
    if (path !== '/*' && /[:*?{]/.test(path))
      throw new Error(`router: ${path}: only exact paths and /* are routed`);
    this.routes.push([method, path, handler]);
  }

  /** The first route for `method` (or added for `ALL`) and `path`. */
  first(method: string, path: string): T | undefined {
    for (const [m, p, h] of this.routes)
      if ((m === method || m === 'ALL') && (p === '/*' || p === path)) return h;
    return undefined;
  }
}
