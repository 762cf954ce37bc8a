/**
 * Bodies that say when they end, so a middleware that only needs to know that (request metrics: a watch
 * is counted when it ends) does not wrap them in a stream layer of its own, which every open watch would
 * hold for its whole life. A body's maker registers it (`tellsEnd`) and calls `bodyEnded` once, whatever
 * the reason (closed, cancelled by the client, errored).
 */
const listeners = new WeakMap<ReadableStream<Uint8Array>, EndListeners>();

/** What runs when a body ends: the maker may keep this instead of the body (see `ended`). */
export type EndListeners = Array<() => void> & { over?: boolean };

export function tellsEnd(body: ReadableStream<Uint8Array>): EndListeners {
  const l: EndListeners = [];
  listeners.set(body, l);
  return l;
}

/** `bodyEnded` by the listeners `tellsEnd` returned (for a maker that lets the body itself go). */
export function ended(l: EndListeners): void {
  l.over = true;
  const fns = l.splice(0);
  for (const fn of fns) fn();
}

/** Runs `fn` when `body` ends; false when the body does not tell (the caller must watch it another way). */
export function onBodyEnd(body: ReadableStream<Uint8Array>, fn: () => void): boolean {
  const l = listeners.get(body);
  // over already: the caller learns of the end its own way (at once)
  if (!l || l.over) return false;
  l.push(fn);
  return true;
}

export function bodyEnded(body: ReadableStream<Uint8Array>): void {
  const l = listeners.get(body);
  listeners.delete(body);
  for (const fn of l ?? []) fn();
}
