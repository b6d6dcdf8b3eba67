import { defineConfig } from 'tsup';

// One entry per public subpath, plus the two `#digest` runtime modules, which stay separate files
// so that the package `imports` condition can choose between them at run time.
export const entries = {
  index: 'src/index.ts',
  testing: 'src/testing/index.ts',
  express: 'adapters/express/index.ts',
  fastify: 'adapters/fastify/index.ts',
  fetch: 'adapters/fetch/index.ts',
  hono: 'adapters/hono/index.ts',
  postgres: 'adapters/postgres/index.ts',
  redis: 'adapters/redis/index.ts',
  dashboard: 'dashboard/index.ts',
  'runtime/web-digest': 'src/runtime/web-digest.ts',
  'runtime/node-digest': 'src/runtime/node-digest.ts',
};

// Entries reach each other (and the core) through the package's own name, so every entry shares
// one copy of the core: one class identity for errors and stores, one compiled-key cache.
const external = ['keygate', /^keygate\//, /^#/, /^node:/];

export default defineConfig([
  {
    entry: entries,
    format: ['esm', 'cjs'],
    dts: true,
    tsconfig: 'tsconfig.node.json',
    clean: true,
    target: 'es2022',
    platform: 'neutral',
    splitting: false,
    treeshake: true,
    external,
  },
  {
    // The `keygate` command: ESM only (it uses top-level await), Node only.
    entry: { cli: 'cli/bin.ts' },
    format: ['esm'],
    dts: false,
    tsconfig: 'tsconfig.node.json',
    target: 'node20',
    platform: 'node',
    external,
  },
]);
