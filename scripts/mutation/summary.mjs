#!/usr/bin/env node
// The mutation score per capability as a Markdown table, from the reports `npm run mutation` left in
// reports/mutation/<capability>/ (a capability with no report yet is left out).
//   node scripts/mutation/summary.mjs [capability...]              the table
//   node scripts/mutation/summary.mjs --survivors [capability...]  also every surviving or uncovered
//                                                                  mutant as file:line, mutator and its replacement
// The score is Stryker's: (killed + timeout) / (killed + timeout + survived + no coverage). Mutants
// that do not compile or crash the run (Stryker's "compile error" and "runtime error") are not counted.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CAPABILITIES, REPORTS_DIR } from './capabilities.mjs';

/** Counts of one report's mutants by status, and the mutants left alive. */
function tally(report) {
  const counts = { Killed: 0, Survived: 0, NoCoverage: 0, Timeout: 0, invalid: 0 };
  const alive = [];
  for (const [file, { mutants }] of Object.entries(report.files)) {
    for (const mutant of mutants) {
      if (mutant.status in counts) counts[mutant.status] += 1;
      else counts.invalid += 1;
      if (mutant.status === 'Survived' || mutant.status === 'NoCoverage') alive.push({ file, ...mutant });
    }
  }
  return { counts, alive };
}

const percent = (part, whole) => (whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)}%`);

/** `seconds` as minutes and seconds, such as `12 min 5 s`. */
const duration = (seconds) => (seconds >= 60 ? `${Math.floor(seconds / 60)} min ${seconds % 60} s` : `${seconds} s`);

/**
 * Prints the table of `names` (default: every capability) and, with `survivors`, the mutants left alive.
 *
 * @example
 * printSummary(['keys', 'limiter']);
 */
export function printSummary(names = Object.keys(CAPABILITIES), { survivors = false } = {}) {
  const rows = [];
  const total = { Killed: 0, Survived: 0, NoCoverage: 0, Timeout: 0, seconds: 0 };
  const alive = [];
  for (const name of names) {
    const file = join(REPORTS_DIR, name, 'mutation.json');
    if (!existsSync(file)) continue;
    const { counts, alive: left } = tally(JSON.parse(readFileSync(file, 'utf8')));
    const runFile = join(REPORTS_DIR, name, 'run.json');
    const run = existsSync(runFile) ? JSON.parse(readFileSync(runFile, 'utf8')) : undefined;
    const detected = counts.Killed + counts.Timeout;
    const valid = detected + counts.Survived + counts.NoCoverage;
    for (const key of ['Killed', 'Survived', 'NoCoverage', 'Timeout']) total[key] += counts[key];
    total.seconds += run?.seconds ?? 0;
    rows.push([
      CAPABILITIES[name].title,
      counts.Killed,
      counts.Survived,
      counts.NoCoverage,
      counts.Timeout,
      percent(detected, valid),
      run ? duration(run.seconds) : '?',
    ]);
    alive.push(...left.map((m) => ({ capability: name, ...m })));
  }
  if (rows.length === 0) {
    console.log(`no reports in ${REPORTS_DIR}/: run \`npm run mutation\` first`);
    return;
  }
  const detected = total.Killed + total.Timeout;
  rows.push([
    '**all**',
    total.Killed,
    total.Survived,
    total.NoCoverage,
    total.Timeout,
    percent(detected, detected + total.Survived + total.NoCoverage),
    duration(total.seconds),
  ]);
  const header = ['capability', 'killed', 'survived', 'no coverage', 'timeout', 'score', 'run time'];
  console.log(`| ${header.join(' | ')} |`);
  console.log(`| ${header.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  if (!survivors) return;
  console.log('');
  for (const m of alive) {
    const { line, column } = m.location.start;
    const replacement = (m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 100);
    console.log(`${m.capability}\t${m.status}\t${m.file}:${line}:${column}\t${m.mutatorName}\t${replacement}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { survivors: { type: 'boolean', default: false } },
  });
  printSummary(positionals.length > 0 ? positionals : undefined, values);
}
