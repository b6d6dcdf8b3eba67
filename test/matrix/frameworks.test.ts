// The framework half of the matrix: the shared adapter case table (test/frameworks/cases.ts) on the
// previous major of each framework, installed under an npm alias. Express 5, Fastify 5 and Fastify 4
// already answer it in test/frameworks/cases.test.ts; this adds Express 4, so all four majors do.
import type express from 'express';
import express4 from 'express4';
import type { KeyStore } from 'keygate';
import { apiKeyAuth } from 'keygate/express';
import { afterAll, describe, expect, it } from 'vitest';
import { routeOptions } from '../frameworks/apps.js';
import { itAnswersEveryCase, sendOverHttp } from '../frameworks/cases.js';
import { seedCaseStore } from '../frameworks/fixtures.js';
import { listen } from '../frameworks/servers.js';

const fixture = await seedCaseStore();

/** The shared routes on Express 4, trusting the loopback proxy as the Express 5 app does. */
function createExpress4App(store: KeyStore) {
  // Typed as Express 5: @types/express 4 and 5 disagree on handler types that keygate does not use.
  const app = (express4 as unknown as typeof express)();
  app.set('trust proxy', 'loopback');
  for (const [path, options] of Object.entries(routeOptions(store))) {
    app.get(path, apiKeyAuth(options), (req, res) => {
      res.json({ keyId: req.apiKey?.id });
    });
  }
  return app;
}

const server = await listen(createExpress4App(fixture.store));
afterAll(() => server.close());

describe('Express 4, real socket', () => {
  it('is the Express 4 major', async () => {
    const { version } = (await import('express4/package.json', { with: { type: 'json' } })).default;
    expect(version).toMatch(/^4\./);
  });

  itAnswersEveryCase(
    () => fixture,
    () => sendOverHttp(server.base),
  );
});
