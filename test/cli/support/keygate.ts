import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root and the built `keygate` binary the tests run, as a user would. */
export const ROOT = join(import.meta.dirname, '../../..');
export const BIN = join(ROOT, 'dist/cli.js');

/** Builds dist/ once when it is missing (the CLI and the example service import the built package). */
export function ensureBuilt(): void {
  if (!existsSync(BIN)) execFileSync('npx', ['tsup', '--silent'], { cwd: ROOT });
}

/** What one run of the binary did. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `keygate ...args` in a child process with `KEYGATE_STORE` set to `store`.
 *
 * @example
 * const run = await keygate({ store: 'pglite:/tmp/x', cwd: '/tmp' }, 'keys', 'list', '--account', 'a');
 */
export function keygate(where: { store: string; cwd: string }, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, KEYGATE_STORE: where.store }, cwd: where.cwd, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}
