/**
 * The fleet's own pages, under `/fleet/`, behind the same chain as every request (authentication,
 * impersonation, policy): the status page and the API it polls.
 */
import type { Context } from 'hono';
import type { FleetEnv } from '../../types.ts';
import { clusterStatuses } from './api.ts';
import { STATUS_PAGE } from './page.ts';

export function statusPage(): Response {
  return new Response(STATUS_PAGE, {
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      // the page's own inline script and style, and fetches to this origin only
      'Content-Security-Policy':
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'",
      'X-Content-Type-Options': 'nosniff',
    },
  });
}

export async function clustersApi(c: Context<FleetEnv>): Promise<Response> {
  const clusters = await clusterStatuses(c.get('deps'), c.req.raw.signal);
  return new Response(`${JSON.stringify({ kind: 'FleetClusterStatusList', clusters })}\n`, {
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
  });
}
