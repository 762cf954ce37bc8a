/**
 * The list splitter (src/merge/jsonsplit/index.ts) over a whole Web stream, as an async generator of events or
 * as a TransformStream: the plainest reading of a body, for tests only. The list route reads its bodies
 * with its own loop (src/list/read.ts, under the body-idle guard), which its test checks against
 * this one; production code does not import it (test/ is not imported from src/).
 */
import { ListSplitter, type SplitEvent, type SplitterOptions } from '../../src/merge/jsonsplit/index.ts';

/**
 * Splits a whole stream. Events come as they are found; the stream is read no faster than the consumer
 * takes events. Cancels the source when the consumer stops early or the body is malformed.
 */
export async function* splitListStream(
  body: ReadableStream<Uint8Array>,
  opts?: SplitterOptions,
): AsyncGenerator<SplitEvent, void, undefined> {
  const splitter = new ListSplitter(opts);
  const reader = body.getReader();
  const queue: SplitEvent[] = [];
  const push = (e: SplitEvent) => {
    queue.push(e);
  };
  let finished = false;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      splitter.push(r.value, push);
      for (let k = 0; k < queue.length; k++) yield queue[k]!;
      queue.length = 0;
    }
    splitter.end();
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** The same as a WHATWG TransformStream: `body.pipeThrough(listSplitterTransform())`. */
export function listSplitterTransform(opts?: SplitterOptions): TransformStream<Uint8Array, SplitEvent> {
  const splitter = new ListSplitter(opts);
  return new TransformStream<Uint8Array, SplitEvent>({
    transform(chunk, controller) {
      splitter.push(chunk, (e) => controller.enqueue(e));
    },
    flush() {
      splitter.end();
    },
  });
}
