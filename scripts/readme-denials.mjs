#!/usr/bin/env node
// The table of denials (status, code, title, detail) in README.md and on the docs site's page of the
// check order is generated from `DENIALS` (src/vocabulary/denials.ts), so that a code added there cannot be
// missing from either.
//   node scripts/readme-denials.mjs           rewrites the table between the markers in each file
//   node scripts/readme-denials.mjs --check   exits 1 if a file's table differs from DENIALS
// test/package/readme-denials.test.ts runs the same comparison in `npm test`.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const README = new URL('../README.md', import.meta.url);
/** Every file that shows the table: the README and the docs page of the check order. */
export const FILES = [README, new URL('../docs/guide/requests.md', import.meta.url)];
export const START =
  '<!-- denials:start (generated from DENIALS by `node scripts/readme-denials.mjs`; do not edit) -->';
export const END = '<!-- denials:end -->';
export const COMMAND = 'node scripts/readme-denials.mjs';

/** A Markdown table cell: pipes escaped, padded to `width`. */
const cell = (text, width) => text.replaceAll('|', '\\|').padEnd(width);

/**
 * The Markdown table of `denials` (the `DENIALS` object), one row per code in its order, columns
 * padded so the source reads as a table too.
 */
export function denialsTable(denials) {
  const header = ['status', 'code', 'title', 'detail (the problem body says)'];
  const rows = Object.entries(denials).map(([code, d]) => [String(d.status), `\`${code}\``, d.title, d.detail]);
  const widths = header.map((h, i) => Math.max(h.length, 3, ...rows.map((r) => cell(r[i], 0).length)));
  const line = (cells) => `| ${cells.map((c, i) => cell(c, widths[i])).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** `readme` (README.md or a docs page) with the text between the markers replaced by the table of `denials`. */
export function withDenialsTable(readme, denials) {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`the file lacks the markers ${START} ... ${END}`);
  return `${readme.slice(0, start + START.length)}\n\n${denialsTable(denials)}\n\n${readme.slice(end)}`;
}

/** `DENIALS` from the sources (bundled with esbuild, so no build of the package is needed). */
export async function loadDenials() {
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: [new URL('../src/vocabulary/denials.ts', import.meta.url).pathname],
    bundle: true,
    write: false,
    format: 'esm',
    logLevel: 'silent',
  });
  const code = Buffer.from(result.outputFiles[0].contents).toString('base64');
  return (await import(`data:text/javascript;base64,${code}`)).DENIALS;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const denials = await loadDenials();
  for (const file of FILES) {
    const name = fileURLToPath(file).slice(fileURLToPath(new URL('..', import.meta.url)).length);
    const text = readFileSync(file, 'utf8');
    const next = withDenialsTable(text, denials);
    if (process.argv.includes('--check')) {
      if (next !== text) {
        console.error(`${name}: the table of denials differs from DENIALS; run \`${COMMAND}\` to rewrite it.`);
        process.exitCode = 1;
      }
    } else if (next !== text) {
      writeFileSync(file, next);
      console.log(`${name}: table of denials rewritten from DENIALS`);
    }
  }
}
