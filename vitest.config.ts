import { configDefaults, defineConfig } from 'vitest/config';

// Unit tests live beside the code they test (src/**/*.test.ts); end-to-end tests, which start real
// servers and drive real kubectl and client libraries over HTTP, live in test/. The suites against the real
// test bed (test/real/) have their own config and command: `npm run test:real` (vitest.real.config.ts).
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'sim/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'test/real/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // the item scanner's lane as the Node server runs it (FLEET_SCANNER_WASM=off: JavaScript)
    setupFiles: ['test/helpers/scanner-lane.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // 2 noisy cores: a few forks, each test file isolated
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
