/**
 * A reader of the text exposition format, written from its specification: series (name and labels as
 * written) → value. The tests read what the registry and the sum over processes write with it.
 */
export function parseExposition(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$/.exec(
      line,
    );
    if (!m) throw new Error(`not an exposition line: ${JSON.stringify(line)}`);
    out.set(`${m[1]}${m[2] ?? ''}`, m[3] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[3]));
  }
  return out;
}
