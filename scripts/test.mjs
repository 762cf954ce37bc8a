// `npm test`: every check, in the order a reviewer would run them, then one summary line.
//   0. the Debian packages the end-to-end tests drive (installed when missing, as root)
//   1. strict type-check (tsc), then src/ with Workers' types only (tsconfig.worker.json: a Node API in code
//      the worker bundles fails here)   2. lint + format check (biome)   3. all tests (vitest: unit + e2e,
//      Node + workerd)   4. the suites against the real test bed (vitest.real.config.ts: builds real
//      Kubernetes, etcd, kwok and Karmada from their Go modules, cached, and starts them; testbed/README.md)
// Ends with `tests: N passed, M failed, K skipped` (the line CI reads) and exits non-zero on any failure.
// `node scripts/test.mjs <vitest args>` runs some of the simulated-fleet tests only (steps 3);
// `npm run test:real` (`node scripts/test.mjs --real`) runs step 4 only.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { ensureSystemDeps } from './system-deps.mjs';

const realOnly = process.argv[2] === '--real';
const extra = realOnly ? [] : process.argv.slice(2);
function step(name, cmd, args) {
  const t0 = Date.now();
  console.log(`\n== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: process.env });
  console.log(
    `== ${name}: ${r.status === 0 ? 'ok' : `FAILED (exit ${r.status})`} in ${((Date.now() - t0) / 1000).toFixed(1)}s`,
  );
  return r.status === 0;
}

// Debian packages the e2e tests drive (scripts/system-deps.mjs): installed here when missing, as root
if (!ensureSystemDeps()) {
  console.log('\ntests: 0 passed, 1 failed, 0 skipped');
  process.exit(1);
}

let ok = true;
if (!extra.length && !realOnly) {
  ok = step('typecheck', 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']) && ok;
  ok = step('typecheck (Workers types)', 'npx', ['tsc', '-p', 'tsconfig.worker.json', '--noEmit']) && ok;
  ok = step('lint', 'npx', ['biome', 'check', '.']) && ok;
}
mkdirSync('.cache', { recursive: true });
let passed = 0;
let failed = 0;
let skipped = 0;
/** one vitest run with a JSON report, its counts added to the summary */
function suite(name, report, args) {
  rmSync(report, { force: true });
  const vitestOk = step(name, 'npx', [
    'vitest',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...args,
  ]);
  if (existsSync(report)) {
    const r = JSON.parse(readFileSync(report, 'utf8'));
    passed += r.numPassedTests ?? 0;
    failed +=
      (r.numFailedTests ?? 0) + (r.numFailedTestSuites && !r.numFailedTests ? r.numFailedTestSuites : 0);
    skipped += (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  } else {
    failed += 1;
  }
  return vitestOk;
}
if (!realOnly) ok = suite('tests', '.cache/vitest-report.json', extra) && ok;
if (realOnly || !extra.length) {
  ok =
    suite('tests against the real test bed', '.cache/vitest-real-report.json', [
      '--config',
      'vitest.real.config.ts',
    ]) && ok;
}
if (passed === 0) {
  console.error('no test ran: that is a failure');
  ok = false;
}
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(ok && failed === 0 ? 0 : 1);
