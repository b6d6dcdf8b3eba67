// `npm start` builds only when a built file is missing or older than a source (scripts/build-if-stale.mjs).
// Each case lays out a small repository in a temporary folder and sets the files' times explicitly.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { entries, kits } from '../../tsup.config.js';

interface Decider {
  SOURCES: readonly string[];
  builtFiles(root: string): string[];
  buildReason(root: string): string | null;
}

// Plain JavaScript, imported by path to keep tsc out of it.
const script = '../../scripts/build-if-stale.mjs';
const { SOURCES, builtFiles, buildReason } = (await import(script)) as Decider;

const MANIFEST = {
  exports: {
    '.': { source: './src/index.ts', import: { types: './dist/index.d.ts', default: './dist/index.js' } },
    './postgres': { require: { default: './dist/postgres.cjs' } },
  },
  imports: { '#digest': { node: { import: './dist/runtime/node-digest.js' } } },
  bin: { keygate: './dist/cli.js' },
};
const BUILT = ['dist/index.js', 'dist/postgres.cjs', 'dist/runtime/node-digest.js', 'dist/cli.js'];
const SOURCE_FILES = [
  'src/index.ts',
  'src/auth/decide.ts',
  'frameworks/express/index.ts',
  'backends/postgres/index.ts',
  'otel/index.ts',
  'dashboard/index.ts',
  'cli/main.ts',
  'tsup.config.ts',
  'tsconfig.json',
  'tsconfig.node.json',
];

const EARLIER = new Date('2026-01-01T00:00:00Z');
const LATER = new Date('2026-01-02T00:00:00Z');

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function write(root: string, file: string, time: Date, text = '') {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), text);
  utimesSync(join(root, file), time, time);
}

/** A repository whose sources were last changed EARLIER and whose dist/ was built LATER. */
function builtRepository() {
  const root = mkdtempSync(join(tmpdir(), 'keygate-build-if-stale-'));
  roots.push(root);
  write(root, 'package.json', EARLIER, JSON.stringify(MANIFEST));
  for (const file of SOURCE_FILES) write(root, file, EARLIER);
  for (const folder of ['src', 'src/auth', 'frameworks', 'frameworks/express', 'backends', 'backends/postgres']) {
    utimesSync(join(root, folder), EARLIER, EARLIER);
  }
  for (const folder of ['otel', 'dashboard', 'cli']) utimesSync(join(root, folder), EARLIER, EARLIER);
  for (const file of BUILT) write(root, file, LATER);
  return root;
}

describe('npm start builds only what is stale', () => {
  it('counts as built files the JavaScript that exports, imports and bin point at, never type declarations', () => {
    expect(builtFiles(builtRepository()).sort()).toEqual([...BUILT].sort());
  });

  it('does not build when every built file is newer than every source', () => {
    expect(buildReason(builtRepository())).toBeNull();
  });

  it.each(SOURCE_FILES.concat('package.json'))('builds when %s changed after the build', (file) => {
    const root = builtRepository();
    utimesSync(join(root, file), new Date(), new Date());
    expect(buildReason(root)).toMatch(/ is newer than dist\//);
  });

  it('builds when a source file was deleted after the build (its folder changed)', () => {
    const root = builtRepository();
    rmSync(join(root, 'src/auth/decide.ts'));
    expect(buildReason(root)).toMatch(/^src is newer than dist\//);
  });

  it.each(BUILT)('builds when %s is missing', (file) => {
    const root = builtRepository();
    rmSync(join(root, file));
    expect(buildReason(root)).toBe(`${file} is missing`);
  });

  it('builds a fresh clone, which has no dist/ at all', () => {
    const root = builtRepository();
    rmSync(join(root, 'dist'), { recursive: true });
    expect(buildReason(root)).toMatch(/ is missing$/);
  });

  it('ignores a source folder the repository does not have', () => {
    const root = builtRepository();
    rmSync(join(root, 'otel'), { recursive: true });
    expect(buildReason(root)).toBeNull();
  });

  it('watches every folder tsup bundles an entry from, the CLI included', () => {
    const folders = [...Object.values(entries), ...Object.values(kits), 'cli/bin.ts'].map((file) => file.split('/')[0]);
    expect(SOURCES).toEqual(expect.arrayContaining([...new Set(folders)]));
  });
});
