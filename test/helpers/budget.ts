/**
 * A stand-in for the Workers platform limit of 6 simultaneous outgoing connections per request: every
 * outgoing fetch of the worker passes through `outbound`, which counts open connections per invocation
 * (the W3C traceparent span the fleet gives each invocation) and refuses the 7th with a 599, loudly, so a
 * fan-out that would queue forever on the real platform fails the test instead.
 */
export interface BudgetHarness {
  outbound: (req: Request) => Promise<Response>;
  /** highest number of simultaneous connections seen for one invocation */
  maxSeen(): number;
  refused(): number;
  /** requests seen per invocation span */
  invocations(): Map<string, number>;
}

export function connectionBudget(limit = 6): BudgetHarness {
  const open = new Map<string, number>();
  const total = new Map<string, number>();
  let max = 0;
  let refused = 0;
  const outbound = async (req: Request): Promise<Response> => {
    const span =
      /^00-[0-9a-f]{32}-([0-9a-f]{16})-/.exec(req.headers.get('traceparent') ?? '')?.[1] ?? 'untagged';
    const n = (open.get(span) ?? 0) + 1;
    total.set(span, (total.get(span) ?? 0) + 1);
    if (n > limit) {
      refused++;
      return new Response(`connection budget: a ${n}th simultaneous connection for one request`, {
        status: 599,
      });
    }
    open.set(span, n);
    max = Math.max(max, n);
    let closed = false;
    const close = () => {
      if (!closed) {
        closed = true;
        open.set(span, (open.get(span) ?? 1) - 1);
      }
    };
    let res: Response;
    try {
      const headers = new Headers(req.headers);
      headers.delete('accept-encoding');
      res = await fetch(req.url, {
        method: req.method,
        headers,
        body: req.body,
        duplex: 'half',
        redirect: 'manual',
      } as RequestInit);
    } catch (err) {
      close();
      throw err;
    }
    if (!res.body) {
      close();
      return res;
    }
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        try {
          const r = await reader.read();
          if (r.done) {
            close();
            c.close();
          } else c.enqueue(r.value);
        } catch (err) {
          close();
          c.error(err);
        }
      },
      async cancel(reason) {
        close();
        await reader.cancel(reason);
      },
    });
    const h = new Headers(res.headers);
    h.delete('content-encoding');
    h.delete('content-length');
    return new Response(body, { status: res.status, statusText: res.statusText, headers: h });
  };
  return { outbound, maxSeen: () => max, refused: () => refused, invocations: () => total };
}
