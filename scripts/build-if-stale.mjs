// `npm start` runs this before the service: it builds dist/ only when a built file the package points
// at is missing or older than a source, and then without type declarations or the size report (the
// service needs neither). `npm run build` and `npm test` always build everything.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * What the built files are made from, relative to the repository: the folders tsup bundles, the
 * manifest whose exports name the outputs, and the build's own configuration (with the script that
 * reads the entry list from the manifest).
 */
export const SOURCES = Object.freeze([
  'src',
  'testing',
  'webhooks',
  'leaks',
  'frameworks',
  'backends',
  'otel',
  'dashboard',
  'cli',
  'package.json',
  'tsup.config.ts',
  'scripts/entry-points.mjs',
  'tsconfig.json',
  'tsconfig.node.json',
]);

/**
 * The built JavaScript files `package.json` points at (`exports`, `imports`, `bin`), relative to `root`:
 * the files a start loads, so the ones whose absence or age decides a build.
 *
 * @param {string} root the repository
 * @returns {string[]}
 * @example
 * builtFiles('.'); // ['dist/index.js', 'dist/index.cjs', ..., 'dist/cli.js']
 */
export function builtFiles(root) {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const found = new Set();
  const walk = (value) => {
    if (typeof value === 'string') {
      if (/^\.\/dist\/.*\.c?js$/.test(value)) found.add(value.slice(2));
    } else if (value && typeof value === 'object') {
      for (const inner of Object.values(value)) walk(inner);
    }
  };
  walk([manifest.exports, manifest.imports, manifest.bin]);
  return [...found];
}

/** The newest modification time (ms) of `path` and, for a folder, everything in it; 0 when absent. */
function newestChange(path) {
  let info;
  try {
    info = statSync(path);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs; // a deleted or renamed file changes its folder
  for (const entry of readdirSync(path, { recursive: true })) {
    newest = Math.max(newest, statSync(join(path, String(entry))).mtimeMs);
  }
  return newest;
}

/**
 * Why `root` needs a build before a start, or null when its built files are all there and newer than
 * every source.
 *
 * @param {string} root the repository
 * @returns {string | null} e.g. `'dist/index.js is missing'`, `'src is newer than dist/cli.js'`
 * @example
 * buildReason('.'); // null on a tree built after its last edit
 */
export function buildReason(root) {
  let oldest = { file: '', mtimeMs: Number.POSITIVE_INFINITY };
  for (const file of builtFiles(root)) {
    let mtimeMs;
    try {
      ({ mtimeMs } = statSync(join(root, file)));
    } catch {
      return `${file} is missing`;
    }
    if (mtimeMs < oldest.mtimeMs) oldest = { file, mtimeMs };
  }
  if (oldest.file === '') return 'package.json names no built file';
  const changed = SOURCES.find((source) => newestChange(join(root, source)) > oldest.mtimeMs);
  return changed ? `${changed} is newer than ${oldest.file}` : null;
}

/**
 * Builds the JavaScript of `root` (tsup with `KEYGATE_SKIP_DTS=1`) when `buildReason` gives a reason;
 * returns false when the build failed.
 *
 * @param {string} root the repository
 * @param {(line: string) => void} [log] where the reason goes. Default `console.error`
 * @example
 * if (!buildIfStale('.')) process.exit(1);
 */
export function buildIfStale(root, log = console.error) {
  const reason = buildReason(root);
  if (reason === null) return true;
  log(`Building keygate (${reason}); type declarations are left to npm run build.`);
  const tsup = createRequire(join(root, 'package.json')).resolve('tsup/dist/cli-default.js');
  const run = spawnSync(process.execPath, [tsup, '--silent'], {
    cwd: root,
    env: { ...process.env, KEYGATE_SKIP_DTS: '1' },
    stdio: 'inherit',
  });
  return run.status === 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  if (!buildIfStale(resolve(import.meta.dirname, '..'))) process.exit(1);
}
