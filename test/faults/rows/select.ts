/**
 * Row tests are defined once (test/faults/rows/*.ts) and enabled by id per runtime: test/e2e/faults-rows-*
 * lists the ids that hold, test/faults/pending/*.test.ts.txt the ones that do not yet (with what is observed).
 * Enabling a row is moving its id from the pending list to the e2e file's.
 */
import { it } from 'vitest';

type It = typeof it;
const off = Object.assign(() => {}, { each: () => () => {} }) as unknown as It;

/** `it` for an enabled id, a no-op (not even a skipped entry) for the others */
export function selector(ids: readonly string[]): (id: string) => It {
  const on = new Set(ids);
  return (id) => (on.has(id) ? it : off);
}
