import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { defineConfig, type Options } from 'tsup';

// One entry per public subpath, plus the two `#digest` runtime modules, which stay separate files
// so that the package `imports` condition can choose between them at run time.
export const entries = {
  index: 'src/index.ts',
  testing: 'src/testing/index.ts',
  express: 'frameworks/express/index.ts',
  fastify: 'frameworks/fastify/index.ts',
  fetch: 'frameworks/fetch/index.ts',
  hono: 'frameworks/hono/index.ts',
  postgres: 'backends/postgres/index.ts',
  redis: 'backends/redis/index.ts',
  otel: 'otel/index.ts',
  'runtime/web-digest': 'src/runtime/web-digest.ts',
  'runtime/node-digest': 'src/runtime/node-digest.ts',
};

// The kits: subpaths that export core helpers the root does not carry, so they bundle those from
// the sources (built separately, with `errorsFromRoot`).
export const kits = {
  'store-kit': 'src/store-kit/index.ts',
  'adapter-kit': 'src/adapter-kit/index.ts',
  dashboard: 'dashboard/index.ts',
};

// Entries reach each other (and the core) through the package's own name, so every entry shares
// one copy of the core: one class identity for errors and stores, one compiled-key cache.
const external = ['keygate', /^keygate\//, /^#/, /^node:/];

type Plugin = NonNullable<Options['esbuildPlugins']>[number];

// A kit bundles core modules from the sources, and some of them throw keygate's errors (`applyPatch`
// throws `KeyRevokedError`). Its copy of `src/errors.ts` would be a second class family, and an
// application's `err instanceof KeygateError` would fail for errors from a store built on the kit.
// So inside a kit, every class of `src/errors.ts` is imported from `keygate` (one identity), and only
// its plain functions (`quote`) come from the source.
const errorsFromRoot: Plugin = {
  name: 'keygate-errors-from-root',
  setup(build) {
    // A path relative to the repository: esbuild writes it into the bundle as a comment.
    build.onResolve({ filter: /^\.\.?\/(.*\/)?errors\.js$/ }, (args) => {
      const path = relative(process.cwd(), join(args.resolveDir, args.path.replace(/\.js$/, '.ts')));
      // Only the core's errors module; any other `errors.ts` (the CLI's own) bundles as usual.
      return path === join('src', 'errors.ts') ? { path, namespace: 'errors-from-root' } : undefined;
    });
    build.onLoad({ filter: /.*/, namespace: 'errors-from-root' }, (args) => {
      const file = resolve(args.path);
      const source = readFileSync(file, 'utf8');
      const names = (pattern: RegExp) => [...source.matchAll(pattern)].map((m) => m[1]).join(', ');
      const classes = names(/^export class (\w+)/gm);
      const functions = names(/^export function (\w+)/gm);
      return {
        contents: `export { ${classes} } from 'keygate';\nexport { ${functions} } from ${JSON.stringify(file)};\n`,
        loader: 'ts',
        resolveDir: dirname(file),
      };
    });
  },
};

// `KEYGATE_SKIP_DTS=1` builds the JavaScript alone (what `npm start` needs, in seconds); `npm run build`
// and `npm test` leave it unset and build the type declarations too.
const declarations = process.env.KEYGATE_SKIP_DTS !== '1';

const library: Options = {
  format: ['esm', 'cjs'],
  dts: declarations,
  tsconfig: 'tsconfig.node.json',
  target: 'es2022',
  platform: 'neutral',
  splitting: false,
  treeshake: true,
  external,
};

export default defineConfig([
  // The kits' type declarations come from this build (so they share declaration chunks with the root);
  // its clean spares the kits' JavaScript, which the next build writes at the same time.
  {
    ...library,
    entry: entries,
    dts: declarations && { entry: { ...entries, ...kits } },
    clean: Object.keys(kits).map((name) => `!${name}.{js,cjs}`),
  },
  { ...library, entry: kits, dts: false, esbuildPlugins: [errorsFromRoot] },
  {
    // The `keygate` command: ESM only (it uses top-level await), Node only.
    entry: { cli: 'cli/bin.ts' },
    format: ['esm'],
    dts: false,
    tsconfig: 'tsconfig.node.json',
    target: 'node20',
    platform: 'node',
    external,
    // The CLI reaches `src/errors.ts` through the dashboard's and its own sources: one class family,
    // the root's, so its exit codes (by error code, for `instanceof KeygateError`) hold.
    esbuildPlugins: [errorsFromRoot],
  },
]);
