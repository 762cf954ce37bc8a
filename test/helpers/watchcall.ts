/**
 * A dispatch handler that records what a watch call tells it (status, headers, body, its end), for the
 * tests of the fleet's own watch connections (src/platform/node-watch-h1.ts and node-watch-h2.ts), which
 * call their handler as undici calls a legacy dispatch handler.
 */

export interface HeardCall {
  status?: number;
  /** lowercased names */
  headers: Record<string, string>;
  body: string;
  done?: 'complete' | Error;
  resume?: () => void;
  abort?: (err: Error) => void;
  /** settles on onComplete or onError */
  ended: Promise<void>;
}

/** `h`, the handler to dispatch with, and what it heard; `pauseAfter`: onData answers false once the body is that long */
export function recordingHandler(pauseAfter?: number): HeardCall & { h: object } {
  let settle!: () => void;
  const heard: HeardCall = { headers: {}, body: '', ended: new Promise((r) => (settle = r)) };
  const h = {
    onConnect(abort: (err: Error) => void) {
      heard.abort = abort;
    },
    onHeaders(status: number, raw: Array<{ toString(): string }>, resume: () => void) {
      heard.status = status;
      heard.resume = resume;
      for (let i = 0; i < raw.length; i += 2)
        heard.headers[raw[i]!.toString().toLowerCase()] = raw[i + 1]!.toString();
      return true;
    },
    onData(chunk: Uint8Array) {
      heard.body += Buffer.from(chunk).toString();
      return pauseAfter === undefined || heard.body.length < pauseAfter;
    },
    onComplete() {
      heard.done = 'complete';
      settle();
    },
    onError(err: Error) {
      heard.done = err;
      settle();
    },
  };
  return Object.assign(heard, { h });
}
