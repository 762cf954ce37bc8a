/**
 * The README's console examples as data: every ```console block, split into `$ command` lines and the
 * output that follows each. A block right after `<!-- not run: why -->` is documentation only.
 */
export interface Example {
  /** 1-based line of the command in README.md */
  line: number;
  command: string;
  output: string;
}
export interface Block {
  line: number;
  run: boolean;
  why?: string;
  examples: Example[];
  /** where the block's body starts and ends in the file's lines (0-based, exclusive end) */
  start: number;
  end: number;
}

export function consoleBlocks(readme: string): Block[] {
  const lines = readme.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```console') continue;
    let j = i - 1;
    while (j >= 0 && lines[j]!.trim() === '') j--;
    const skip = /^<!--\s*not run:\s*(.*?)\s*-->$/.exec(lines[j]?.trim() ?? '');
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end]!.trim() !== '```') end++;
    const examples: Example[] = [];
    // a block inside a list item is indented like its fence
    const indent = lines[i]!.length - lines[i]!.trimStart().length;
    for (let k = start; k < end; k++) {
      const l = lines[k]!.slice(indent);
      if (l.startsWith('$ ')) examples.push({ line: k + 1, command: l.slice(2), output: '' });
      else if (examples.length) {
        const e = examples[examples.length - 1]!;
        e.output += (e.output ? '\n' : '') + l;
      }
    }
    blocks.push({ line: i + 1, run: !skip, ...(skip ? { why: skip[1] } : {}), examples, start, end });
    i = end;
  }
  return blocks;
}

/** Output as printed: trailing blanks and blank lines at the end do not count */
export function tidy(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n+$/, '');
}

/**
 * Output as compared: tidied, and the age of an object an example itself made does not count either (an
 * AGE cell in seconds: `0s` and `97s` compare equal)
 */
export function normalise(text: string): string {
  return tidy(text).replace(/(?<=\s)\d{1,3}s(?=\s|$)/gm, '0s');
}

/** The README with each example's output replaced (README_UPDATE=1 writes what the demo printed). */
export function withOutputs(readme: string, outputs: Map<number, string>): string {
  const lines = readme.split('\n');
  const out: string[] = [];
  for (let k = 0; k < lines.length; k++) {
    const l = lines[k]!;
    out.push(l);
    const o = outputs.get(k + 1);
    const pad = l.slice(0, l.length - l.trimStart().length);
    if (o === undefined || !l.trimStart().startsWith('$ ')) continue;
    // drop the old output (up to the next command or the block's end) and write the new one, keeping
    // the blank line that separated it from the next example
    let blankAfter = false;
    const isEnd = (x: string) => x.trimStart().startsWith('$ ') || x.trim() === '```';
    while (k + 1 < lines.length && !isEnd(lines[k + 1]!)) {
      k++;
      blankAfter = lines[k]!.trim() === '';
    }
    if (o) out.push(...o.split('\n').map((x) => (x ? pad + x : x)));
    if (blankAfter) out.push('');
  }
  return out.join('\n');
}
