// package.json `exports` is the one list of entry points: the build, the API reference, the size table
// and `typesVersions` are derived from it (scripts/entry-points.mjs), so none of them can miss a subpath.
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { entryPoints, internalModules, readManifest, typesVersionsOf } from '../../scripts/entry-points.mjs';
import { entries, kits } from '../../tsup.config.js';

const ROOT = join(import.meta.dirname, '../..');
// Plain JavaScript, imported by path to keep tsc out of it.
const typedocConfig = '../../typedoc.config.mjs';
const { default: typedoc } = (await import(typedocConfig)) as { default: { entryPoints: string[] } };

const manifest = readManifest();
const subpaths = Object.keys(manifest.exports).filter((subpath) => subpath !== './package.json');

describe('the entry list (package.json exports)', () => {
  it('names a source file that exists for every subpath', () => {
    expect(entryPoints().map((entry) => entry.subpath)).toEqual(subpaths);
    for (const entry of entryPoints()) expect(existsSync(join(ROOT, entry.source)), entry.source).toBe(true);
  });

  it('gives each subpath a folder of its own, so the API reference can name its module by folder', () => {
    const folders = entryPoints().map((entry) => posix.dirname(entry.source));
    expect(new Set(folders).size).toBe(folders.length);
  });

  it('is what tsup builds: every subpath and every `imports` module, each once, from its source', () => {
    const built = { ...entries, ...kits };
    const wanted = Object.fromEntries(
      [...entryPoints(), ...internalModules()].map((entry) => [entry.output, entry.source]),
    );
    expect(built).toEqual(wanted);
    expect(Object.keys(entries).length + Object.keys(kits).length).toBe(Object.keys(wanted).length);
  });

  it('is what TypeDoc documents', () => {
    expect(typedoc.entryPoints).toEqual(entryPoints().map((entry) => entry.source));
  });

  it('is what typesVersions maps, for TypeScript under node10 resolution', () => {
    expect(manifest.typesVersions).toEqual(typesVersionsOf());
    const written = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).typesVersions['*'];
    expect(Object.keys(written)).toEqual(subpaths.filter((subpath) => subpath !== '.').map((s) => s.slice(2)));
  });

  it('names each entry by the import a user writes', () => {
    expect(entryPoints()[0]).toMatchObject({ subpath: '.', importName: 'keygate', output: 'index' });
    expect(entryPoints().find((entry) => entry.subpath === './store-kit')).toMatchObject({
      importName: 'keygate/store-kit',
      output: 'store-kit',
      types: './dist/store-kit.d.ts',
    });
  });
});
