// An application that installs keygate alone (none of its optional peers, not even @types/node)
// type-checks keygate's root declarations with `skipLibCheck: false`: the root's types name no
// optional peer (OpenTelemetry's meter and tracer are described by shapes of keygate's own).
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const work = mkdtempSync(join(tmpdir(), 'keygate-declarations-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'index.d.ts'))) throw new Error('dist/ is missing: run `npm run build` first');
  const installed = join(work, 'node_modules', 'keygate');
  mkdirSync(join(installed, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(installed, 'package.json'));
  for (const file of readdirSync(join(ROOT, 'dist'))) {
    if (file.endsWith('.d.ts')) cpSync(join(ROOT, 'dist', file), join(installed, 'dist', file));
  }
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  writeFileSync(
    join(work, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
      },
      files: ['app.ts'],
    }),
  );
}, 60_000);

describe("keygate's root declarations", () => {
  it('type-check in an application without OpenTelemetry or any other optional peer', async () => {
    writeFileSync(
      join(work, 'app.ts'),
      [
        "import { authenticate, type AuthenticateOptions, CachedKeyStore, KeyManager, MemoryKeyStore } from 'keygate';",
        'const store = new MemoryKeyStore();',
        'const options: AuthenticateOptions = { permissions: ["email:verify"] };',
        'export const parts = [authenticate, options, new CachedKeyStore(store), new KeyManager({ store })];',
      ].join('\n'),
    );
    const run = await promisify(execFile)(process.execPath, [TSC, '-p', work], { cwd: work }).then(
      () => ({ code: 0, out: '' }),
      (err: { code: number; stdout: string }) => ({ code: err.code, out: err.stdout }),
    );
    expect(run.out).toBe('');
    expect(run.code).toBe(0);
  }, 60_000);
});
