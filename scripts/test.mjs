// `npm test`: every check, in the order a reviewer would run them, then one summary line.
//   0. the Debian packages the end-to-end tests drive (installed when missing, as root)
//   1. strict type-check (tsc), then src/ with Workers' types only (tsconfig.worker.json: a Node API in code
//      the worker bundles fails here)   2. lint + format check (biome)   3. all tests (vitest: unit + e2e,
//      Node + workerd)
// Ends with `tests: N passed, M failed, K skipped` (the line CI reads) and exits non-zero on any failure.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { ensureSystemDeps } from './system-deps.mjs';

const extra = process.argv.slice(2);
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
if (!extra.length) {
  ok = step('typecheck', 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']) && ok;
  ok = step('typecheck (Workers types)', 'npx', ['tsc', '-p', 'tsconfig.worker.json', '--noEmit']) && ok;
  ok = step('lint', 'npx', ['biome', 'check', '.']) && ok;
}
mkdirSync('.cache', { recursive: true });
const report = '.cache/vitest-report.json';
rmSync(report, { force: true });
const vitestOk = step('tests', 'npx', [
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  ...extra,
]);
ok = vitestOk && ok;

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  passed = r.numPassedTests ?? 0;
  failed = (r.numFailedTests ?? 0) + (r.numFailedTestSuites && !r.numFailedTests ? r.numFailedTestSuites : 0);
  skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
} else {
  failed = 1;
}
if (passed === 0) {
  console.error('no test ran: that is a failure');
  ok = false;
}
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(ok && failed === 0 ? 0 : 1);
