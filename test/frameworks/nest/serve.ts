// A child process serving the case table's routes through keygate/nestjs on both Nest platforms:
// nest.test.ts bundles this file into test/frameworks/nest11/.build, where `@nestjs/*` resolve to
// Nest 11. It rebuilds the parent's store from KEYGATE_RECORDS (JSON), prints one JSON line
// (`{ nest, express, fastify }`: Nest's version and each platform's path -> base URL), and exits when
// its standard input closes, so it never outlives the test.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ApiKeyRecord } from 'keygate';
import { storeFromRecords } from '../fixtures.js';
import { serveCaseRoutes } from './app.js';

async function main(): Promise<void> {
  const records = JSON.parse(process.env.KEYGATE_RECORDS ?? '[]') as ApiKeyRecord[];
  const store = await storeFromRecords(records);
  const express = await serveCaseRoutes('express', store);
  const fastify = await serveCaseRoutes('fastify', store);
  const core = createRequire(import.meta.url).resolve('@nestjs/core/package.json');
  const { version } = JSON.parse(readFileSync(core, 'utf8')) as { version: string };
  process.stdout.write(`${JSON.stringify({ nest: version, express: express.bases, fastify: fastify.bases })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    void Promise.all([express.close(), fastify.close()]).finally(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
