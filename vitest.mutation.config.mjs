// The vitest config of `npm run mutation` (scripts/mutation.mjs): the contract suites of keygate/testing
// on memory and on SQLite (better-sqlite3), and nothing else. The files that run them also hold
// backend-specific tests; test/mutation/contract-only.ts skips those, so that a killed mutant is one
// the contract suites kill. Stryker picks each capability's files out of this list.
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';
import { CAPABILITIES } from './scripts/mutation/capabilities.mjs';

export default defineConfig({
  // As in vitest.config.ts: `keygate/...` resolves to the TypeScript sources (here: Stryker's mutated copies).
  ssr: { resolve: { conditions: ['source', ...defaultServerConditions.filter((c) => c !== 'module')] } },
  test: {
    include: Object.values(CAPABILITIES).flatMap((c) => c.tests),
    setupFiles: ['test/mutation/contract-only.ts'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
