/**
 * The app's router. Its routes are exact paths and `/*` (every path: each middleware and the catch-all),
 * so a match is a string compare per route, in the order the routes were added (as hono's routers
 * order them). It replaces hono's RegExpRouter, whose trie and regular expressions (3.7 KiB of the
 * worker bundle, issue 16) serve patterns the app never writes; a pattern it cannot match exactly is
 * refused when it is added, never matched wrongly.
 */
import type { Params, Result, Router } from 'hono/router';

const NO_PARAMS: Params = Object.create(null);

export class ExactRouter<T> implements Router<T> {
  readonly name = 'ExactRouter';
  private readonly routes: Array<[method: string, path: string, handler: T]> = [];

  add(method: string, path: string, handler: T): void {
    if (path !== '/*' && /[:*?{]/.test(path))
      throw new Error(`router: ${path}: only exact paths and /* are routed`);
    this.routes.push([method, path, handler]);
  }

  match(method: string, path: string): Result<T> {
    const out: [T, Params][] = [];
    for (const [m, p, h] of this.routes)
      if ((m === method || m === 'ALL') && (p === '/*' || p === path)) out.push([h, NO_PARAMS]);
    return [out];
  }

  /** The first route for `method` and `path`, as a table of routes without the framework. */
  first(method: string, path: string): T | undefined {
    for (const [m, p, h] of this.routes)
      if ((m === method || m === 'ALL') && (p === '/*' || p === path)) return h;
    return undefined;
  }
}
