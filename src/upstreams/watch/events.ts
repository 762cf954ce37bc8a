/**
 * One upstream watch body as events: newline-delimited JSON, one event a line. A line that is not a JSON
 * watch event breaks the stream (the caller resumes it as if it had been cut): an upstream that sends
 * garbage is retried with backoff, never believed.
 */
import type { WatchEvent } from '../../merge/watchmerge.ts';

export class WatchStreamError extends Error {}

function parseEvent(line: string): WatchEvent {
  let ev: unknown;
  try {
    ev = JSON.parse(line);
  } catch {
    throw new WatchStreamError(`not JSON: ${JSON.stringify(line.slice(0, 40))}`);
  }
  if (
    !ev ||
    typeof ev !== 'object' ||
    typeof (ev as WatchEvent).type !== 'string' ||
    !(ev as WatchEvent).object ||
    typeof (ev as WatchEvent).object !== 'object'
  )
    throw new WatchStreamError(`not a watch event: ${JSON.stringify(line.slice(0, 40))}`);
  return ev as WatchEvent;
}

/** Reads newline-delimited JSON watch events from a body; cancels the body when the reader stops. */
export async function* watchEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<WatchEvent> {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) yield parseEvent(line);
        nl = buf.indexOf('\n');
      }
    }
    const rest = (buf + dec.decode()).trim();
    if (rest) yield parseEvent(rest);
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The Status in an upstream error answer, if it is one (the body is consumed). */
export async function readStatusBody(
  res: Response,
): Promise<import('../../kube/status.ts').Status | undefined> {
  const text = await res.text().catch(() => '');
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && v.kind === 'Status' ? v : undefined;
  } catch {
    return undefined;
  }
}
