/**
 * /healthz, /livez, /readyz, answered like kube-apiserver (text `ok`; `?verbose` lists the checks).
 * Live = this process serves requests. Ready = the control plane answers its own /readyz: without it the
 * fleet has neither membership nor the `karmada` clusterspace.
 */
import type { Context } from 'hono';
import type { ClientDeps } from '../types.ts';

function checkBody(name: string, checks: Array<[string, string | undefined]>, verbose: boolean): string {
  const failed = checks.filter(([, err]) => err !== undefined);
  if (!verbose && failed.length === 0) return 'ok';
  const lines = checks.map(([n, err]) =>
    err === undefined ? `[+]${n} ok` : `[-]${n} failed: reason withheld`,
  );
  lines.push(failed.length ? `${name} check failed` : `${name} check passed`);
  return `${lines.join('\n')}\n`;
}

function text(body: string, status: number): Response {
  return new Response(body, {
    status,
    headers: {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-cache, private',
    },
  });
}

export function live(c: Context): Response {
  return liveAs(c, 'livez');
}

/** /healthz: the same checks as /livez, named as kube-apiserver names them (`healthz check passed`) */
export function healthz(c: Context): Response {
  return liveAs(c, 'healthz');
}

function liveAs(c: Context, name: string): Response {
  const verbose = c.req.query('verbose') !== undefined;
  return text(checkBody(name, [['ping', undefined]], verbose), 200);
}

export async function ready(c: Context, deps: ClientDeps): Promise<Response> {
  const verbose = c.req.query('verbose') !== undefined;
  let err: string | undefined;
  try {
    const res = await deps.client.send(deps.membership.controlPlane, {
      method: 'GET',
      path: '/readyz',
      signal: c.req.raw.signal,
    });
    await res.body?.cancel();
    if (!res.ok) err = `control plane /readyz answered ${res.status}`;
  } catch (e) {
    err = (e as Error).message;
  }
  // the reason goes to the log, as kube-apiserver withholds it from the body
  if (err) console.warn(`fleet: readyz: ${err}`);
  const checks: Array<[string, string | undefined]> = [
    ['ping', undefined],
    ['control-plane', err],
  ];
  return text(checkBody('readyz', checks, verbose), err ? 500 : 200);
}
