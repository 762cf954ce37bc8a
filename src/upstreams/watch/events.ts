/**
 * One upstream watch body as events: newline-delimited JSON, one event a line (src/util/lines.ts splits
 * them). A line that is not a JSON watch event, or one longer than any object kube stores, breaks the
 * stream: the caller resumes it as if it had been cut, so an upstream that sends garbage is retried with
 * backoff, never believed.
 */

import type { WatchEvent } from '../../merge/watchmerge.ts';
import { readChunks } from '../../util/chunks.ts';
import { lineSplitter, NotJsonError, ndjson } from '../../util/lines.ts';

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

/**
 * Reads a watch body event by event into `onEvent`, synchronously per chunk, with no stream layer of its
 * own (what an idle watch holds is one pending read of its body). `onEvent` returning false stops reading
 * and cancels the body. Resolves at the body's end; rejects (as `watchEvents` throws) on a break or on a
 * line that is not a watch event, after every event before it was handed over.
 */
export function readWatchEvents(
  body: ReadableStream<Uint8Array>,
  onEvent: (ev: WatchEvent) => boolean,
): Promise<void> {
  let stopped = false;
  const split = lineSplitter({ maxLineBytes: MAX_EVENT_BYTES }, (line) => {
    if (stopped) return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new NotJsonError(`not a JSON line: ${JSON.stringify(line.slice(0, 80))}`);
    }
    if (!isEvent(v)) throw new WatchStreamError(`not a watch event: ${JSON.stringify(v)?.slice(0, 80)}`);
    if (!onEvent(v)) {
      stopped = true;
      reading.cancel();
    }
  });
  const reading = readChunks(body, (chunk) => {
    if (!stopped) split.push(chunk);
  });
  return reading.done.then(() => {
    if (!stopped) split.end();
  });
}
