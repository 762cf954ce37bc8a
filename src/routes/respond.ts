/**
 * Small helpers the fleet routes share to read upstream answers and write their own.
 */
import type { Status } from '../merge/status.ts';

/** The Status in an upstream error body, or undefined when the body is not one (e.g. `404 page not found`). */
export async function readStatus(res: Response): Promise<Status | undefined> {
  const text = await res.text().catch(() => '');
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && v.kind === 'Status' ? (v as Status) : undefined;
  } catch {
    return undefined;
  }
}

const encoder = new TextEncoder();

/**
 * A response whose body is produced piece by piece. Each piece is sent as it comes (no buffering); when
 * the client goes away the generator is closed, so whatever it holds (upstream bodies) is released.
 */
export function streamResponse(body: AsyncGenerator<string>, status: number, headers: Headers): Response {
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const r = await body.next();
        if (r.done) controller.close();
        else controller.enqueue(encoder.encode(r.value));
      } catch (err) {
        // the response has started: the only honest signal left is a broken body
        console.error('fleet: merged response failed mid-stream:', (err as Error).message);
        controller.error(err);
      }
    },
    async cancel() {
      await body.return(undefined);
    },
  });
  return new Response(stream, { status, headers });
}
