#!/usr/bin/env node
// `npm run mutation [-- <capability>... --concurrency <n>]`: Stryker's mutation testing of the
// contract suites (keygate/testing) over memory and SQLite, one capability after the other, and the
// table of scores at the end. Not part of `npm test` or CI: a full run takes long (docs/development.md
// says how long).
//   npm run mutation                          every capability (scripts/mutation/capabilities.mjs)
//   npm run mutation -- keys limiter          those only
//   npm run mutation -- --concurrency 1       Stryker's test processes (default 2)
// Each capability's reports go to reports/mutation/<capability>/ (mutation.json, mutation.html, and
// run.json with its duration and commit); `node scripts/mutation/summary.mjs` prints the table again.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Stryker } from '@stryker-mutator/core';
import { CAPABILITIES, REPORTS_DIR } from './mutation/capabilities.mjs';
import { printSummary } from './mutation/summary.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { concurrency: { type: 'string', default: '2' } },
});
const names = positionals.length > 0 ? positionals : Object.keys(CAPABILITIES);
const unknown = names.filter((name) => !(name in CAPABILITIES));
if (unknown.length > 0) {
  console.error(`unknown capability ${unknown.join(', ')}; known: ${Object.keys(CAPABILITIES).join(', ')}`);
  process.exit(2);
}
const concurrency = Number(values.concurrency);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`--concurrency must be a whole number of at least 1, got ${values.concurrency}`);
  process.exit(2);
}

const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trim();
const commit = git('rev-parse', '--short', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';

for (const name of names) {
  const capability = CAPABILITIES[name];
  const out = join(REPORTS_DIR, name);
  mkdirSync(out, { recursive: true });
  console.log(`\n## ${capability.title} (${name}): ${capability.mutate.length} files mutated`);
  const startedMs = Date.now();
  // Read by vitest.mutation.config.mjs in Stryker's test processes, which inherit this environment.
  process.env.KEYGATE_MUTATION_CAPABILITY = name;
  const stryker = new Stryker({
    testRunner: 'vitest',
    plugins: ['@stryker-mutator/vitest-runner'],
    vitest: { configFile: 'vitest.mutation.config.mjs', related: false },
    mutate: capability.mutate,
    // Each mutant runs only the contract cases that reached it in the first, unmutated run.
    coverageAnalysis: 'perTest',
    concurrency,
    // The sandbox needs the sources and tests; the rest of the repository stays out of it.
    ignorePatterns: ['docs', 'bench', 'examples', 'dist', 'coverage', 'cli', '.keygate'],
    reporters: ['progress-append-only', 'json', 'html'],
    jsonReporter: { fileName: join(out, 'mutation.json') },
    htmlReporter: { fileName: join(out, 'mutation.html') },
    thresholds: { high: 90, low: 75, break: null },
    cleanTempDir: 'always',
  });
  await stryker.runMutationTest();
  const seconds = Math.round((Date.now() - startedMs) / 1000);
  const run = { capability: name, seconds, concurrency, commit, dirty, date: new Date().toISOString() };
  writeFileSync(join(out, 'run.json'), `${JSON.stringify(run, null, 2)}\n`);
  console.log(`${name}: ${seconds} s`);
}

printSummary(names);
