// Internals the benchmark measures on their own although `keygate` does not export them (the
// allow-list matcher): bundled from the sources with the same esbuild settings as the package build,
// then imported from memory.
import { build } from 'esbuild';

/** The module at `path` (relative to the repository root, a TypeScript source under `src/`). */
export async function importSource(path) {
  const result = await build({
    entryPoints: [new URL(`../${path}`, import.meta.url).pathname],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    // `#errors` (the package's `imports` map) from the sources too, like everything else here.
    conditions: ['source'],
    target: 'es2022',
    logLevel: 'silent',
  });
  const code = Buffer.from(result.outputFiles[0].contents).toString('base64');
  return import(`data:text/javascript;base64,${code}`);
}
