// The shared case table against every adapter on Node. The same table runs on workerd in workerd.test.ts.
import { serve } from '@hono/node-server';
import fastify4 from 'fastify4';
import { afterAll, describe } from 'vitest';
import { createFetchHandler, createHonoApp } from './apps.js';
import { itAnswersEveryCase, observe, type SendCase, sendOverHttp } from './cases.js';
import { seedCaseStore } from './fixtures.js';
import { createExpressApp, createFastifyApp, listen, sendByInject } from './servers.js';

const fixture = await seedCaseStore();
const closers: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(closers.map((close) => close())));

async function served(app: Parameters<typeof listen>[0]): Promise<string> {
  const { base, close } = await listen(app);
  closers.push(close);
  return base;
}

const fastify5 = await createFastifyApp(fixture.store);
const fastify4App = await createFastifyApp(fixture.store, '127.0.0.1', fastify4 as never);
const fetchHandler = createFetchHandler(fixture.store);
const hono = createHonoApp(fixture.store);

function servedHono(): Promise<string> {
  return new Promise((resolve) => {
    const server = serve({ fetch: hono.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      closers.push(() => new Promise((r) => server.close(() => r())));
      resolve(`http://127.0.0.1:${info.port}`);
    });
  });
}

const adapters: Array<[string, SendCase]> = [
  ['Express, real socket', sendOverHttp(served(createExpressApp(fixture.store)))],
  ['Fastify 5, inject()', sendByInject(() => fastify5)],
  ['Fastify 5, real socket', sendOverHttp(served(await createFastifyApp(fixture.store)))],
  ['Fastify 4, inject()', sendByInject(() => fastify4App)],
  [
    'Fastify 4, real socket',
    sendOverHttp(served(await createFastifyApp(fixture.store, '127.0.0.1', fastify4 as never))),
  ],
  [
    'Fetch on Node',
    async ({ path, headers }) => observe(await fetchHandler(new Request(`http://api.test${path}`, { headers }))),
  ],
  ['Hono on Node, app.request()', async ({ path, headers }) => observe(await hono.request(path, { headers }))],
  ['Hono on Node, real socket (@hono/node-server)', sendOverHttp(servedHono())],
];

describe.each(adapters)('%s', (_, send) => {
  itAnswersEveryCase(
    () => fixture,
    () => send,
  );
});
