#!/usr/bin/env node
// Packs keygate exactly as `npm pack` would, without touching the repository's package.json: the
// publishable files (package.json, dist, README, LICENSE, and the pack hooks) are copied into a
// staging directory and `npm pack` runs there, hooks included. Prints the tarball's absolute path.
// Usage: node scripts/pack.mjs <destination directory>   (run `npm run build` first)
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const destination = resolve(process.argv[2] ?? '.');
if (!existsSync(join(root, 'dist', 'index.js'))) {
  console.error('pack: dist/ is missing; run `npm run build` first');
  process.exit(1);
}

const stage = mkdtempSync(join(tmpdir(), 'keygate-stage-'));
try {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  for (const entry of ['package.json', 'scripts', ...pkg.files]) {
    if (existsSync(join(root, entry))) cpSync(join(root, entry), join(stage, entry), { recursive: true });
  }
  mkdirSync(destination, { recursive: true });
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: stage,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // npm prints the hooks' output before the JSON report.
  const [{ filename }] = JSON.parse(out.slice(out.indexOf('[')));
  console.log(join(destination, filename));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
