/**
 * What the shortened fleet names this instance has made stand for (names.ts): shortened name → the
 * object's name. Only {@link rememberShortened} fills it, and names.ts calls it with the name it has just
 * shortened, so every entry is a fact (the name's digest and head make that shortened name); an entry never
 * goes stale, the object may only have gone (then its cluster answers 404 as for any name). It is a memo,
 * not a store: a replica or isolate that has not met a name resolves it by asking the cluster
 * (src/routes/locate.ts), which shortens the names it lists and so fills this memo.
 *
 * Bounded: at most MAX_ENTRIES, the least recently used go first (a Map keeps insertion order; a hit
 * moves its entry to the end). Two names with one shortened name (a 64-bit digest collision, and the same
 * head) make the entry ambiguous: it then resolves to nothing and the route answers 409.
 */

export const MAX_ENTRIES = 4096;

const AMBIGUOUS = Symbol('ambiguous');
const memo = new Map<string, string | typeof AMBIGUOUS>();

/** Records that `short` is the shortened name of `name`. */
export function rememberShortened(short: string, name: string): void {
  const had = memo.get(short);
  memo.delete(short);
  memo.set(short, had === undefined || had === name ? name : AMBIGUOUS);
  if (memo.size > MAX_ENTRIES) memo.delete(memo.keys().next().value!);
}

/** The name `short` stands for; undefined when unknown here or ambiguous (see {@link isAmbiguous}). */
export function recallShortened(short: string): string | undefined {
  const name = memo.get(short);
  if (name === undefined) return undefined;
  memo.delete(short);
  memo.set(short, name);
  return name === AMBIGUOUS ? undefined : name;
}

/** Whether two different names were seen with the shortened name `short`. */
export function isAmbiguous(short: string): boolean {
  return memo.get(short) === AMBIGUOUS;
}

/** Tests only: forget everything. */
export function forgetShortened(): void {
  memo.clear();
}
