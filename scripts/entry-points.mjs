// The one list of keygate's entry points: package.json `exports` (each subpath's `source` condition
// names the file it is built from, its `import` condition the file it is built into) and the modules of
// its `imports` map. The build (tsup.config.ts), the API reference (typedoc.config.mjs and its module
// names), the size table (scripts/size.mjs) and `typesVersions` are derived from it; adding a subpath is
// one edit of package.json, then `node scripts/entry-points.mjs --write` for `typesVersions`.
//   node scripts/entry-points.mjs --check   exits 1 if package.json's typesVersions is not the derived one
//   node scripts/entry-points.mjs --write   writes the derived typesVersions into package.json
import { readFileSync, writeFileSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const MANIFEST = join(ROOT, 'package.json');

/**
 * The repository's package.json, parsed.
 *
 * @returns {import('./entry-points.d.mts').Manifest}
 * @example
 * readManifest().exports['./express'].source; // './frameworks/express/index.ts'
 */
export function readManifest() {
  return JSON.parse(readFileSync(MANIFEST, 'utf8'));
}

/** `./dist/runtime/node-digest.js` -> `runtime/node-digest`: the output's name as tsup takes it. */
function outputName(file) {
  const name = posix.normalize(file).replace(/\.js$/, '');
  if (!name.startsWith('dist/')) throw new Error(`package.json points at ${file}, outside dist/`);
  return name.slice('dist/'.length);
}

/** The ESM file a target's `import` condition names (a string, or `{ types, default }`). */
function importedFile(target, where) {
  const file = typeof target?.import === 'string' ? target.import : target?.import?.default;
  if (typeof file !== 'string') throw new Error(`package.json ${where} has no import condition`);
  return file;
}

/** './src/index.ts' -> 'src/index.ts' */
const relative = (file) => posix.normalize(file);

/**
 * Every public entry point: each `exports` subpath that has a `source` condition, in package.json's order.
 *
 * @param {import('./entry-points.d.mts').Manifest} [manifest]
 * @returns {import('./entry-points.d.mts').EntryPoint[]}
 * @example
 * entryPoints()[1]; // { subpath: './express', importName: 'keygate/express', source: 'frameworks/express/index.ts', output: 'express', types: './dist/express.d.ts' }
 */
export function entryPoints(manifest = readManifest()) {
  return Object.entries(manifest.exports).flatMap(([subpath, target]) => {
    if (typeof target !== 'object' || typeof target.source !== 'string') return [];
    return [
      {
        subpath,
        importName: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
        source: relative(target.source),
        output: outputName(importedFile(target, `exports["${subpath}"]`)),
        types: target.import?.types,
      },
    ];
  });
}

/**
 * The modules of the `imports` map (`#errors`, both `#digest` files, both `#webhook-send` files): built as separate files, not public.
 * A module whose `source` is chosen by condition (`node`, `default`) gives one file per condition.
 *
 * @param {import('./entry-points.d.mts').Manifest} [manifest]
 * @returns {import('./entry-points.d.mts').InternalModule[]}
 * @example
 * internalModules().map((m) => m.output); // ['runtime/node-digest', 'runtime/web-digest', 'runtime/node-webhook-send', 'runtime/web-webhook-send', 'errors']
 */
export function internalModules(manifest = readManifest()) {
  return Object.entries(manifest.imports ?? {}).flatMap(([specifier, target]) => {
    if (typeof target.source === 'string') {
      return [{ specifier, source: relative(target.source), output: outputName(importedFile(target, specifier)) }];
    }
    return Object.entries(target.source).map(([condition, source]) => ({
      specifier,
      source: relative(source),
      output: outputName(importedFile(target[condition], `imports["${specifier}"].${condition}`)),
    }));
  });
}

/**
 * The `typesVersions` that TypeScript's `node10` resolution needs to find each subpath's types.
 *
 * @param {import('./entry-points.d.mts').Manifest} [manifest]
 * @returns {{ '*': Record<string, string[]> }}
 * @example
 * typesVersionsOf()['*'].express; // ['./dist/express.d.ts']
 */
export function typesVersionsOf(manifest = readManifest()) {
  const map = {};
  for (const entry of entryPoints(manifest)) {
    if (entry.subpath === '.') continue;
    if (typeof entry.types !== 'string') throw new Error(`package.json exports["${entry.subpath}"] has no types`);
    map[entry.subpath.slice(2)] = [entry.types];
  }
  return { '*': map };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const manifest = readManifest();
  const derived = typesVersionsOf(manifest);
  const same = JSON.stringify(manifest.typesVersions) === JSON.stringify(derived);
  if (process.argv.includes('--write')) {
    if (!same) writeFileSync(MANIFEST, `${JSON.stringify({ ...manifest, typesVersions: derived }, null, 2)}\n`);
    console.log(same ? 'typesVersions already matches exports' : 'typesVersions rewritten from exports');
  } else if (process.argv.includes('--check')) {
    if (!same) {
      console.error('package.json typesVersions differs from exports: run node scripts/entry-points.mjs --write');
      process.exitCode = 1;
    }
  } else {
    for (const entry of entryPoints(manifest)) console.log(`${entry.importName.padEnd(22)} ${entry.source}`);
  }
}
