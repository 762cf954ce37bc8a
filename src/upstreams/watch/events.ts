/**
 * One upstream watch body as events: newline-delimited JSON, one event a line (src/util/lines.ts splits
 * them). A line that is not a JSON watch event, or one longer than any object kube stores, breaks the
 * stream: the caller resumes it as if it had been cut, so an upstream that sends garbage is retried with
 * backoff, never believed.
 */

import type { WatchEvent } from '../../merge/watchmerge.ts';
import { ndjson } from '../../util/lines.ts';

/** etcd refuses values over 1.5 MiB; a watch line of a Table or a managed-fields-heavy object stays well under */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;

export class WatchStreamError extends Error {
  override name = 'WatchStreamError';
}

function isEvent(v: unknown): v is WatchEvent {
  return (
    !!v &&
    typeof v === 'object' &&
    typeof (v as WatchEvent).type === 'string' &&
    !!(v as WatchEvent).object &&
    typeof (v as WatchEvent).object === 'object'
  );
}

/** Reads newline-delimited JSON watch events from a body; cancels the body when the reader stops. */
export async function* watchEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<WatchEvent> {
  const reader = body.pipeThrough(ndjson<unknown>({ maxLineBytes: MAX_EVENT_BYTES })).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (!isEvent(value))
        throw new WatchStreamError(`not a watch event: ${JSON.stringify(value)?.slice(0, 80)}`);
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
