import { defineConfig, type Options } from 'tsup';

// One entry per public subpath, plus the modules the package `imports` map names: the two `#digest`
// runtime modules, which stay separate files so that a condition can choose between them at run
// time, and `#errors`, the one copy of the error classes that every entry imports.
export const entries = {
  errors: 'src/errors.ts',
  index: 'src/index.ts',
  testing: 'src/testing/index.ts',
  express: 'frameworks/express/index.ts',
  fastify: 'frameworks/fastify/index.ts',
  fetch: 'frameworks/fetch/index.ts',
  hono: 'frameworks/hono/index.ts',
  koa: 'frameworks/koa/index.ts',
  elysia: 'frameworks/elysia/index.ts',
  nestjs: 'frameworks/nestjs/index.ts',
  next: 'frameworks/next/index.ts',
  postgres: 'backends/postgres/index.ts',
  redis: 'backends/redis/index.ts',
  mysql: 'backends/mysql/index.ts',
  sqlite: 'backends/sqlite/index.ts',
  drizzle: 'backends/drizzle/index.ts',
  cloudflare: 'backends/cloudflare/index.ts',
  otel: 'otel/index.ts',
  'runtime/web-digest': 'src/runtime/web-digest.ts',
  'runtime/node-digest': 'src/runtime/node-digest.ts',
};

// The kits: subpaths that export core helpers the root does not carry, so they bundle those from the
// sources (built separately). What they bundle reaches the error classes through `#errors`, as the
// root does, so every entry throws the same classes and `instanceof KeygateError` holds across them.
export const kits = {
  'store-kit': 'src/store-kit/index.ts',
  'adapter-kit': 'src/adapter-kit/index.ts',
  webhooks: 'webhooks/index.ts',
  dashboard: 'dashboard/index.ts',
  leaks: 'leaks/index.ts',
};

// Entries reach each other (and the core) through the package's own name, so every entry shares
// one copy of the core: one class identity for stores, one compiled-key cache. The `#` imports
// (`#digest`, `#errors`) stay imports too, resolved by the package's `imports` map.
const external = ['keygate', /^keygate\//, /^#/, /^node:/];

const library: Options = {
  format: ['esm', 'cjs'],
  dts: false,
  tsconfig: 'tsconfig.node.json',
  target: 'es2022',
  platform: 'neutral',
  splitting: false,
  treeshake: true,
  external,
};

// `KEYGATE_SKIP_DTS=1` builds the JavaScript alone (what `npm start` needs, in seconds); `npm run build`
// and `npm test` leave it unset and build the type declarations too.
const withDeclarations = process.env.KEYGATE_SKIP_DTS !== '1';

// Each build cleans only what it writes: the builds run at the same time into one folder.
const declarations = ['!**/*.d.ts', '!**/*.d.cts'];
const scripts = ['!**/*.js', '!**/*.cjs'];

export default defineConfig([
  {
    ...library,
    entry: entries,
    clean: [...declarations, ...Object.keys(kits).map((name) => `!${name}.{js,cjs}`)],
  },
  { ...library, entry: kits },
  // Every entry's type declarations, the kits' included, in one build so that they share chunks. The
  // error classes' declarations are bundled like any other type (`#errors` is not external here), so
  // the types need no `imports` map: TypeScript under `node10` resolution reads them too.
  ...(withDeclarations
    ? [
        {
          ...library,
          entry: { ...entries, ...kits },
          dts: { only: true },
          external: external.filter((name) => String(name) !== String(/^#/)).concat('#digest'),
          clean: scripts,
        },
      ]
    : []),
  {
    // The `keygate` command: ESM only (it uses top-level await), Node only.
    entry: { cli: 'cli/bin.ts' },
    format: ['esm'],
    tsconfig: 'tsconfig.node.json',
    target: 'node20',
    platform: 'node',
    external,
  },
]);
