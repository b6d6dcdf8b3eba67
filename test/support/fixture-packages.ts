// Some tests run code against packages of their own, kept out of the root install: the other
// runtimes (Node 22 and 24, Bun, Deno) in test/matrix/runtimes, and NestJS 11 in test/frameworks/nest11.
// `.ci/run` installs them from their lock files; this global setup does the same for `npm test` on a
// fresh clone, once, when a package's install is missing or older than its lock file, so the
// README's test command passes by itself after `npm install`.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The fixture packages, each a folder with its own package.json and package-lock.json. */
export const FIXTURE_PACKAGES = ['test/matrix/runtimes', 'test/frameworks/nest11'];

/** Whether `dir`'s install is missing or older than its lock file (npm writes node_modules/.package-lock.json). */
export function needsInstall(dir: string): boolean {
  const installed = join(dir, 'node_modules', '.package-lock.json');
  if (!existsSync(installed)) return true;
  return statSync(join(dir, 'package-lock.json')).mtimeMs > statSync(installed).mtimeMs;
}

export default function setup(): void {
  for (const relative of FIXTURE_PACKAGES) {
    const dir = join(ROOT, relative);
    if (!needsInstall(dir)) continue;
    console.log(`installing the test fixture package ${relative} from its lock file (npm ci --prefix ${relative})`);
    const run = spawnSync('npm', ['ci', '--prefix', dir, '--no-audit', '--no-fund', '--loglevel=error'], {
      stdio: 'inherit',
    });
    if (run.status !== 0) {
      console.log(`could not install ${relative}; its tests say what is missing. Run: npm ci --prefix ${relative}`);
    }
  }
}
