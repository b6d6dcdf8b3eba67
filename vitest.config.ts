import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Tests import `keygate`, `keygate/express`, ... by the package's own name. The `source` export
// condition points those names at the TypeScript sources, so the exports map is exercised without
// a build; the packed-tarball test covers the built files. The bundler-only `module` condition is left
// out: @opentelemetry/api's `module` build is not loadable by Node.
export default defineConfig({
  ssr: { resolve: { conditions: ['source', ...defaultServerConditions.filter((c) => c !== 'module')] } },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Before the run: the fixture packages (other runtimes, NestJS 11) installed from their lock files
    // when missing. After every file: no test left keygate's tables in PostgreSQL's public schema or
    // Redis's default prefixes.
    globalSetup: ['test/support/fixture-packages.ts', 'test/support/no-leftovers.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
