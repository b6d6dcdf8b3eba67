#!/usr/bin/env node
// CI check of what users install: packs keygate as `npm pack` would (scripts/pack.mjs, which leaves
// the repository's package.json alone), then lints the tarball with publint --strict and checks
// every entry point's types with @arethetypeswrong/cli (ESM and CJS under node16, bundler, and
// node10 through `typesVersions`, which must be the one derived from `exports`: scripts/entry-points.mjs).
// Run `npm run build` first.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'keygate-exports-'));
const run = (command, args, cwd = root) => execFileSync(command, args, { cwd, stdio: 'inherit' });

run('node', [join(root, 'scripts', 'entry-points.mjs'), '--check']);
try {
  const tarball = execFileSync('node', [join(root, 'scripts', 'pack.mjs'), work], { cwd: root, encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1);
  run('tar', ['xzf', tarball, '-C', work]);
  // Lint the unpacked tarball: exactly the files and the package.json a user receives.
  run(join(root, 'node_modules', '.bin', 'publint'), ['--strict', '--pack', 'false', join(work, 'package')]);
  run(join(root, 'node_modules', '.bin', 'attw'), [tarball, '--format', 'table-flipped']);
} finally {
  rmSync(work, { recursive: true, force: true });
}
