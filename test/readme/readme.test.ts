/**
 * Every console example in the README and in the pages it links for the details, run as written against
 * the embedded demo (`npm start`'s fleet: the simulated control plane and members) with the kubectl and
 * Helm the tests use, its output compared with what the page shows. A page that drifts from the product
 * fails here. The README runs first (its examples write the kubeconfig contexts the others use), then each
 * page in the order below, all on one fleet.
 * `README_UPDATE=1 npx vitest run test/readme` rewrites the outputs from the demo (review the diff).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { startNodeFleet } from '../../deploy/node/server.ts';
import { ensureHelm, ensureKubectl } from '../../scripts/kubectl.mjs';
import { parseConfig } from '../../src/config/schema.ts';
import { consoleBlocks, normalise, tidy, withOutputs } from './examples.ts';

/** the pages whose console examples run, in order */
const PAGES = ['README.md', 'docs/fleet-view.md', 'docs/configuration.md'];
const SHOWN = 'http://127.0.0.1:8080';
const pages = PAGES.map((page) => {
  const text = readFileSync(resolve(page), 'utf8');
  return { page, text, blocks: consoleBlocks(text), printed: new Map<number, string>() };
});

let sims: ServedSimFleet;
let fleet: { url: string; stop(ms?: number): Promise<void> };
let env: NodeJS.ProcessEnv;

function sh(command: string): Promise<string> {
  return new Promise((res) => {
    execFile('bash', ['-c', `${command} 2>&1`], { env, cwd: process.cwd(), timeout: 60_000 }, (_e, stdout) =>
      res(stdout),
    );
  });
}

beforeAll(async () => {
  sims = await startSimFleet({ propagation: true });
  // exactly what `npm start` serves without a configuration (deploy/node/main.ts)
  fleet = await startNodeFleet({ config: parseConfig(sims.karmadaConfig(), 'embedded default') });
  const home = mkdtempSync(join(tmpdir(), 'fleet-readme-'));
  env = {
    ...process.env,
    PATH: [dirname(ensureKubectl()), dirname(ensureHelm()), resolve('bin'), process.env.PATH].join(':'),
    HOME: home,
    KUBECONFIG: join(home, '.kube', 'config'),
    KUBECACHEDIR: join(home, '.kube', 'cache'),
    README_CWD: home,
  };
});
afterAll(async () => {
  await fleet?.stop(500);
  await sims?.close();
  if (process.env.README_UPDATE)
    for (const p of pages) writeFileSync(resolve(p.page), withOutputs(p.text, p.printed));
});

/**
 * Reads of what controllers do in their own time (the demo's Karmada propagates every half second, as
 * Karmada's controllers do): asked again until they show it, as a reader would look twice
 */
const EVENTUAL = /^kubectl (get|fleet diff)\b/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('the README stays a guide a newcomer reads in ten minutes: under 350 lines, the details in docs/', () => {
  expect(pages[0]!.text.trimEnd().split('\n').length).toBeLessThan(350);
});

describe.each(pages)('$page', ({ page, blocks, printed }) => {
  it('has console examples, and says why any of them does not run', () => {
    expect(blocks.filter((b) => b.run).length).toBeGreaterThan(0);
    for (const b of blocks) if (!b.run) expect(b.why, `${page}:${b.line}`).toBeTruthy();
  });

  // in order, on one fleet: later examples may see what earlier ones wrote, as a reader's would
  for (const b of blocks.filter((x) => x.run))
    for (const ex of b.examples)
      it(`${page}:${ex.line}: $ ${ex.command}`, async () => {
        const run = async () =>
          tidy((await sh(ex.command.replaceAll(SHOWN, fleet.url))).replaceAll(fleet.url, SHOWN));
        const want = normalise(ex.output);
        const eventual = EVENTUAL.test(ex.command);
        if (eventual && process.env.README_UPDATE) await sleep(2_000);
        let out = await run();
        for (const until = Date.now() + 20_000; eventual && normalise(out) !== want && Date.now() < until; ) {
          await sleep(500);
          out = await run();
        }
        printed.set(ex.line, out);
        if (!process.env.README_UPDATE) expect(normalise(out)).toBe(want);
      });
});
