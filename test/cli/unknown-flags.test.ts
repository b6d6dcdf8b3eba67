// A misspelt flag is refused before anything opens, naming the flag and the nearest one the command takes.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';

async function refused(argv: string[]) {
  let stderr = '';
  const code = await runCli([...argv, '--json', '--store', 'redis://127.0.0.1:1'], {
    env: {},
    out: () => {},
    err: (text) => (stderr += text),
  });
  return { code, error: JSON.parse(stderr).error as { code: string; field: string; message: string } };
}

describe('an unknown flag', () => {
  it.each([
    [['keys', 'list', '--acount', 'acct_1'], '--acount', '--account'],
    [
      ['keys', 'create', '--account', 'a', '--name', 'n', '--mode', 'test', '--permision', 'x'],
      '--permision',
      '--permission',
    ],
    [['credits', 'top-up', '--account', 'a', '--amout', '5'], '--amout', '--amount'],
    [['doctor', '--requre-allow-list', 'live'], '--requre-allow-list', '--require-allow-list'],
    [['keys', 'list', '--account', 'a', '--sotre', 'x'], '--sotre', '--store'],
  ])('%j is refused naming %s, suggesting %s', async (argv, field, nearest) => {
    const run = await refused(argv);
    expect(run.code).toBe(1);
    expect(run.error).toMatchObject({ code: 'invalid_input', field });
    expect(run.error.message).toContain(`did you mean ${nearest}?`);
  });

  it('a flag another command takes keeps its own refusal, without a guess', async () => {
    const run = await refused(['keys', 'list', '--account', 'a', '--amount', '5']);
    expect(run.error).toMatchObject({ code: 'invalid_input', field: '--amount' });
    expect(run.error.message).toBe('keys list does not take --amount; see keygate keys list --help');
  });

  it('a flag near none is refused pointing at the help', async () => {
    const run = await refused(['keys', 'list', '--account', 'a', '--frobnicate']);
    expect(run.error).toMatchObject({ code: 'invalid_input', field: '--frobnicate' });
    expect(run.error.message).toContain('see keygate keys list --help');
    expect(run.error.message).not.toContain('did you mean');
  });
});
