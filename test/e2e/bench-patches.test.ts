/**
 * The bench's patches (bench/lib/*.patch: marks applied for a run only, docs/benchmarks.md) are diffs
 * against src/, which moves under them: each must still apply to this tree (`git apply --check`, nothing
 * written), or the run they serve fails at its first step. Needs a git checkout (CI's clone is one);
 * elsewhere (an unpacked archive) the test is skipped and says why.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = realpathSync(fileURLToPath(new URL('../..', import.meta.url)));
const PATCHES = readdirSync(`${ROOT}/bench/lib`)
  .filter((f) => f.endsWith('.patch'))
  .sort();

const git = (args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });

/** why git cannot check here, or undefined when ROOT is the top of a git checkout */
function notACheckout(): string | undefined {
  const r = git(['rev-parse', '--show-toplevel']);
  if (r.error) return `git cannot be run (${r.error.message})`;
  if (r.status !== 0) return `not a git checkout: ${r.stderr.trim()}`;
  const top = realpathSync(r.stdout.trim());
  return top === ROOT ? undefined : `not the top of a git checkout (that is ${top})`;
}
const skipped = notACheckout();

describe("the bench's patches", () => {
  it('include the two docs/benchmarks.md names', () => {
    // a glob that found nothing would leave the check below checking nothing
    expect(PATCHES).toEqual(
      expect.arrayContaining(['firstevent-spare-ab.patch', 'firstevent-timeline.patch']),
    );
  });

  it.for(PATCHES)('%s applies to this tree', (patch, ctx) => {
    if (skipped) ctx.skip(skipped);
    const r = git(['apply', '--check', `bench/lib/${patch}`]);
    expect(
      r.status === 0 ? '' : r.stderr || `git apply ended with ${r.status ?? r.signal}`,
      `bench/lib/${patch} does not apply: refresh it against src/ (or, applied here for a run, \`git apply -R\` it)`,
    ).toBe('');
  });
});
