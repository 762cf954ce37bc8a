/**
 * Parses the path once (src/request/info.ts) and puts the result on the context; every later step reads
 * it instead of looking at the URL again.
 */
import type { MiddlewareHandler } from 'hono';
import { parseRequestInfo } from '../../request/info.ts';
import type { InfoVariables } from '../../types.ts';

export const requestInfo: MiddlewareHandler<{ Variables: InfoVariables }> = async (c, next) => {
  const url = new URL(c.req.url);
  c.set('info', parseRequestInfo(c.req.method, url.pathname, url.searchParams));
  await next();
};
