// The shared case table through keygate/nestjs, over a real socket: Nest 12 (the root's devDependency)
// in this process, and Nest 11 (test/frameworks/nest11, a package of its own) in a child process
// running a bundle of the same test app, on @nestjs/platform-express and @nestjs/platform-fastify.
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { itAnswersEveryCase, type SendCase, sendOverHttp } from './cases.js';
import { seedCaseStore } from './fixtures.js';
import { type NestPlatform, serveCaseRoutes } from './nest/app.js';

const fixture = await seedCaseStore();
const closers: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(closers.map((close) => close())));

/** Sends each row to the application serving its path. */
function sendTo(bases: Record<string, string> | Promise<Record<string, string>>): SendCase {
  return async (request) => sendOverHttp(Promise.resolve(bases).then((b) => b[request.path] as string))(request);
}

async function servedInProcess(platform: NestPlatform): Promise<Record<string, string>> {
  const served = await serveCaseRoutes(platform, fixture.store);
  closers.push(served.close);
  return served.bases;
}

const NEST11 = join(import.meta.dirname, 'nest11');

/** Bundles the test app for Nest 11 (its packages left to resolve from NEST11) and starts it. */
async function servedByNest11(): Promise<{ nest: string } & Record<NestPlatform, Record<string, string>>> {
  const outfile = join(NEST11, '.build', 'serve.mjs');
  await build({
    entryPoints: [join(import.meta.dirname, 'nest', 'serve.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source'],
    external: ['@nestjs/*', 'reflect-metadata', 'rxjs', 'fastify', 'express'],
    logLevel: 'silent',
  });
  const child: ChildProcess = spawn(process.execPath, [outfile], {
    env: { ...process.env, KEYGATE_RECORDS: JSON.stringify(fixture.records) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // The child exits when its standard input closes; then the bundle goes too: the test leaves nothing behind.
  closers.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.stdin?.end();
      });
    }
    rmSync(join(NEST11, '.build'), { recursive: true, force: true });
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))));
    });
    child.once('exit', (code) => reject(new Error(`the Nest 11 app exited with ${code}`)));
  });
}

const nest11 = servedByNest11();
const { version: nest12 } = createRequire(import.meta.url)('@nestjs/core/package.json') as { version: string };

describe.each([
  ['Nest 12 on Express, real socket', 'express'],
  ['Nest 12 on Fastify, real socket', 'fastify'],
] as const)('%s', (_, platform) => {
  const bases = servedInProcess(platform);
  it('is the Nest 12 major', () => expect(nest12).toMatch(/^12\./));
  itAnswersEveryCase(
    () => fixture,
    () => sendTo(bases),
  );
});

describe.each([
  ['Nest 11 on Express, real socket', 'express'],
  ['Nest 11 on Fastify, real socket', 'fastify'],
] as const)('%s', (_, platform) => {
  it('is the Nest 11 major', async () => expect((await nest11).nest).toMatch(/^11\./));
  itAnswersEveryCase(
    () => fixture,
    () => sendTo(nest11.then((served) => served[platform])),
  );
});
