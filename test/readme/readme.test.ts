/**
 * Every console example in the README, run as written against the embedded demo (`npm start`'s fleet:
 * the simulated control plane and members) with the kubectl and Helm the tests use, its output compared
 * with what the README shows. A README that drifts from the product fails here.
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
import { consoleBlocks, normalise, withOutputs } from './examples.ts';

const README = resolve('README.md');
const SHOWN = 'http://127.0.0.1:8080';
const text = readFileSync(README, 'utf8');
const blocks = consoleBlocks(text);
const runnable = blocks.filter((b) => b.run);
const printed = new Map<number, string>();

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
  sims = await startSimFleet();
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
  if (process.env.README_UPDATE) writeFileSync(README, withOutputs(text, printed));
});

describe('the README', () => {
  it('has console examples that run, and says why the others do not', () => {
    expect(runnable.length).toBeGreaterThan(3);
    for (const b of blocks) if (!b.run) expect(b.why, `README.md:${b.line}`).toBeTruthy();
  });

  // in order, on one fleet: later examples may see what earlier ones wrote, as a reader's would
  for (const b of runnable)
    for (const ex of b.examples)
      it(`README.md:${ex.line}: $ ${ex.command}`, async () => {
        const out = normalise(
          (await sh(ex.command.replaceAll(SHOWN, fleet.url))).replaceAll(fleet.url, SHOWN),
        );
        printed.set(ex.line, out);
        if (!process.env.README_UPDATE) expect(out).toBe(normalise(ex.output));
      });
});
