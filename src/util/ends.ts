/**
 * Bodies that say when they end, so a middleware that only needs to know that (request metrics: a watch
 * is counted when it ends) does not wrap them in a stream layer of its own, which every open watch would
 * hold for its whole life. A body's maker registers it (`tellsEnd`) and calls `bodyEnded` once, whatever
 * the reason (closed, cancelled by the client, errored).
 */
const listeners = new WeakMap<ReadableStream<Uint8Array>, Array<() => void>>();

export function tellsEnd(body: ReadableStream<Uint8Array>): void {
  listeners.set(body, []);
}

/** Runs `fn` when `body` ends; false when the body does not tell (the caller must watch it another way). */
export function onBodyEnd(body: ReadableStream<Uint8Array>, fn: () => void): boolean {
  const l = listeners.get(body);
  if (!l) return false;
  l.push(fn);
  return true;
}

export function bodyEnded(body: ReadableStream<Uint8Array>): void {
  const l = listeners.get(body);
  listeners.delete(body);
  for (const fn of l ?? []) fn();
}
