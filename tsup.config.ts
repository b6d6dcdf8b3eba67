import { readFileSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';
import { entryPoints, internalModules, type Manifest } from './scripts/entry-points.mjs';

// The kits: subpaths that export core helpers the root does not carry, so they bundle those from the
// sources (built separately). What they bundle reaches the error classes through `#errors`, as the
// root does, so every entry throws the same classes and `instanceof KeygateError` holds across them.
const KITS = new Set([
  'keygate/store-kit',
  'keygate/adapter-kit',
  'keygate/webhooks',
  'keygate/dashboard',
  'keygate/leaks',
]);

// Every entry is package.json's (scripts/entry-points.mjs reads it): one per public subpath, each built
// from its `source` condition into the file its `import` condition names, plus the modules the package
// `imports` map names: the two `#digest` runtime modules, which stay separate files so that a condition
// can choose between them at run time, and `#errors`, the one copy of the error classes that every
// entry imports.
// The manifest is read here, beside this file: tsup bundles this configuration with the script inlined,
// so the script's own folder is not where it runs.
const manifest: Manifest = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
const publicEntries = entryPoints(manifest);
const named = (list: readonly { output: string; source: string }[]) =>
  Object.fromEntries(list.map(({ output, source }) => [output, source]));

/** The entries built in one pass: the subpaths other than the kits, and the `imports` modules. */
export const entries: Record<string, string> = named([
  ...internalModules(manifest),
  ...publicEntries.filter((entry) => !KITS.has(entry.importName)),
]);

/** The kits, built in a pass of their own. */
export const kits: Record<string, string> = named(publicEntries.filter((entry) => KITS.has(entry.importName)));

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
