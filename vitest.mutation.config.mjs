// The vitest config of `npm run mutation` (scripts/mutation.mjs): the contract suites of keygate/testing
// on memory and on SQLite (better-sqlite3), and nothing else. The files that run them also hold
// backend-specific tests; test/mutation/contract-only.ts skips those, so that a killed mutant is one
// the contract suites kill. KEYGATE_MUTATION_CAPABILITY (set by scripts/mutation.mjs) narrows the files
// to one capability's; unset, every capability's run. (Stryker's own `testFiles` option is not used:
// with it, Stryker 9.6 switches mutants in module-level code on only after the modules have loaded,
// so every such mutant survives.)
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';
import { CAPABILITIES } from './scripts/mutation/capabilities.mjs';

const only = process.env.KEYGATE_MUTATION_CAPABILITY;
if (only !== undefined && !(only in CAPABILITIES)) {
  throw new Error(`KEYGATE_MUTATION_CAPABILITY=${only} is none of ${Object.keys(CAPABILITIES).join(', ')}`);
}
const capabilities = only === undefined ? Object.values(CAPABILITIES) : [CAPABILITIES[only]];

export default defineConfig({
  // As in vitest.config.ts: `keygate/...` resolves to the TypeScript sources (here: Stryker's mutated copies).
  ssr: { resolve: { conditions: ['source', ...defaultServerConditions.filter((c) => c !== 'module')] } },
  test: {
    include: capabilities.flatMap((c) => c.tests),
    setupFiles: ['test/mutation/contract-only.ts'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
