// The table of denials in README.md and on the docs page of the check order is `DENIALS` written out
// (scripts/readme-denials.mjs): a code added to DENIALS without rewriting them fails here, with the
// command that fixes it.
import { readFileSync } from 'node:fs';
import { DENIALS } from 'keygate';
import { describe, expect, it } from 'vitest';

interface Generator {
  FILES: URL[];
  COMMAND: string;
  denialsTable(denials: Record<string, { status: number; title: string; detail: string }>): string;
  withDenialsTable(readme: string, denials: typeof DENIALS): string;
}

// Plain JavaScript, imported by path to keep tsc out of it.
const script = '../../scripts/readme-denials.mjs';
const generator = (await import(script)) as Generator;

const files = generator.FILES.map((url) => [url.pathname.replace(/^.*\/(?=README\.md$|docs\/)/, ''), url] as const);

it('shows the table in README.md and on the docs page of the check order', () => {
  expect(files.map(([name]) => name)).toEqual(['README.md', 'docs/guide/requests.md']);
});

describe.each(files)('%s, the table of denials', (name, file) => {
  it('shows exactly the rows of DENIALS, in their order', () => {
    const text = readFileSync(file, 'utf8');
    const expected = generator.withDenialsTable(text, DENIALS);
    const hint = `${name}: the table of denials differs from DENIALS: run \`${generator.COMMAND}\` to rewrite it`;
    expect(text === expected, hint).toBe(true);
  });

  it.each(Object.entries(DENIALS))('has the row of %s with its status and title', (code, denial) => {
    const text = readFileSync(file, 'utf8');
    const row = text.split('\n').find((line) => line.includes(`| \`${code}\` `));
    expect(row?.split('|').map((cell) => cell.trim())).toEqual([
      '',
      String(denial.status),
      `\`${code}\``,
      denial.title,
      denial.detail,
      '',
    ]);
  });
});

describe('the generator', () => {
  it('picks up a code added to DENIALS by itself', () => {
    const added = { status: 429, title: 'Quota exhausted', detail: 'Retry after the time given.' };
    const table = generator.denialsTable({ ...DENIALS, quota_exhausted: added });
    const lines = table.split('\n');
    expect(lines).toHaveLength(Object.keys(DENIALS).length + 3);
    expect(lines.at(-1)).toMatch(
      /^\| 429 +\| `quota_exhausted` +\| Quota exhausted +\| Retry after the time given\. +\|$/,
    );
  });

  it('escapes a pipe in a title or detail so the table keeps its columns', () => {
    const table = generator.denialsTable({ odd: { status: 400, title: 'a | b', detail: 'c' } });
    expect(
      table
        .split('\n')
        .at(-1)
        ?.split(/(?<!\\)\|/),
    ).toHaveLength(6);
  });
});
