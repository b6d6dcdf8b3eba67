#!/usr/bin/env node
// `npm pack` / `npm publish` hooks: the published package.json must not carry the `source` export
// conditions, which point at TypeScript files that are not in the tarball (a consumer whose bundler
// or tsconfig enables a `source` condition would resolve keygate to files that do not exist).
// `prepack` saves the repository's package.json and writes the stripped one; `postpack` restores
// the saved bytes, so the repository keeps the conditions its tests resolve through.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = process.cwd();
const manifest = join(root, 'package.json');
const saved = join(root, 'node_modules', '.cache', 'keygate', 'package.json.repo');

/** A copy of `value` without any `source` key, at any depth. */
function withoutSource(value) {
  if (Array.isArray(value)) return value.map(withoutSource);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'source')
      .map(([key, inner]) => [key, withoutSource(inner)]),
  );
}

/** The package.json to publish: the same fields, in the same order, without `source` conditions. */
function publishedManifest(pkg) {
  return { ...pkg, exports: withoutSource(pkg.exports), imports: withoutSource(pkg.imports) };
}

const command = process.argv[2];
if (command === 'strip') {
  // A save left behind means a previous pack died between the hooks: restore first, never stack.
  if (existsSync(saved)) renameSync(saved, manifest);
  const text = readFileSync(manifest, 'utf8');
  mkdirSync(dirname(saved), { recursive: true });
  writeFileSync(saved, text);
  writeFileSync(manifest, `${JSON.stringify(publishedManifest(JSON.parse(text)), null, 2)}\n`);
} else if (command === 'restore') {
  if (existsSync(saved)) renameSync(saved, manifest);
} else if (command !== undefined) {
  console.error(`usage: published-manifest.mjs strip|restore (got ${command})`);
  process.exit(1);
}
