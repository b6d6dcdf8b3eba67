// A key field sent on two lines, over a real socket to each Node adapter. Node's `req.headers` keeps
// only the first `Authorization` line, so these requests are written byte by byte: the contract says
// two header lines (even with the same key on both) are 401 `malformed_api_key`, never the first key.
import { connect } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import type { AuthenticateOptions, KeyStore } from 'keygate';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth } from 'keygate/fastify';
import { apiKeyAuth as honoAuth } from 'keygate/hono';
import { apiKeyAuth as koaAuth } from 'keygate/koa';
import { KeygateModule } from 'keygate/nestjs';
import Koa from 'koa';
import { afterAll, describe, expect, it } from 'vitest';
import { seedCaseStore } from './fixtures.js';
import { appModule, controller, createNestApp, listenOn } from './nest/app.js';
import { listen } from './servers.js';

const { store, secrets } = await seedCaseStore();
const closers: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(closers.map((close) => close())));

type Options = Pick<AuthenticateOptions, 'from'>;
/** Starts an app guarding `/` with these options; resolves to its `host:port`. */
type Start = (store: KeyStore, options: Options) => Promise<string>;

async function hostOf(app: Parameters<typeof listen>[0]): Promise<string> {
  const { base, close } = await listen(app);
  closers.push(close);
  return new URL(base).host;
}

const ADAPTERS: Array<[string, Start]> = [
  [
    'Express',
    (store, options) => {
      const app = express();
      app.get('/', expressAuth({ store, ...options }), (_req, res) => void res.json({ ok: true }));
      return hostOf(app);
    },
  ],
  [
    'Fastify',
    async (store, options) => {
      const app = Fastify();
      await app.register(fastifyAuth, { store, ...options });
      app.get('/', async () => ({ ok: true }));
      return hostOf(app);
    },
  ],
  [
    'Koa',
    (store, options) => {
      const app = new Koa();
      app.use(koaAuth({ store, ...options }));
      app.use((ctx) => {
        ctx.body = { ok: true };
      });
      return hostOf(app);
    },
  ],
  ...(['express', 'fastify'] as const).map((platform): [string, Start] => [
    `NestJS on ${platform}`,
    async (store, options) => {
      const routes = controller([{ path: '/', handle: () => ({ ok: true }) }]);
      const app = await createNestApp(platform, appModule([KeygateModule.forRoot({ store, ...options })], [routes]));
      const base = await listenOn(app);
      closers.push(() => app.close());
      return new URL(base).host;
    },
  ]),
  // A Fetch adapter on Node, for comparison: the Fetch `Headers` join the lines, which is refused too.
  [
    'Hono on @hono/node-server',
    (store, options) => {
      const app = new Hono();
      app.use('*', honoAuth({ store, ...options }));
      app.get('/', (c) => c.json({ ok: true }));
      return new Promise((resolve) => {
        const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
          closers.push(() => new Promise((r) => server.close(() => r())));
          resolve(`127.0.0.1:${info.port}`);
        });
      });
    },
  ],
];

/** Writes a GET of `/` with these header lines, as they are; resolves to the status and the problem's code. */
function sendLines(host: string, lines: string[]): Promise<{ status: number; code: string | null }> {
  const [hostname, port] = host.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      resolve({ status, code: /"code":"([a-z_]+)"/.exec(text)?.[1] ?? null });
    });
    socket.write(['GET / HTTP/1.1', `Host: ${host}`, ...lines, 'Connection: close', '', ''].join('\r\n'));
  });
}

const MALFORMED = { status: 401, code: 'malformed_api_key' };

describe.each(ADAPTERS)('%s, a key field on two lines', (_, start) => {
  it("from 'bearer': two Authorization lines are malformed, whichever key comes first", async () => {
    const host = await start(store, { from: 'bearer' });
    const one = `Authorization: Bearer ${secrets.open}`;
    expect(await sendLines(host, [one])).toEqual({ status: 200, code: null });
    expect(await sendLines(host, [one, `Authorization: Bearer ${secrets.revoked}`])).toEqual(MALFORMED);
    expect(await sendLines(host, [one, 'Authorization: Bearer mk_test_garbage'])).toEqual(MALFORMED);
  });

  it("from 'bearer': the same key on two lines is malformed too", async () => {
    const host = await start(store, { from: 'bearer' });
    const one = `Authorization: Bearer ${secrets.open}`;
    expect(await sendLines(host, [one, one])).toEqual(MALFORMED);
  });

  it("from 'either': two Authorization lines are malformed, with or without the key header", async () => {
    const host = await start(store, { from: 'either' });
    const one = `Authorization: Bearer ${secrets.open}`;
    expect(await sendLines(host, [one, one])).toEqual(MALFORMED);
    expect(await sendLines(host, [`x-api-key: ${secrets.open}`, one, one])).toEqual(MALFORMED);
  });

  it("from 'header': the key header on two lines is malformed", async () => {
    const host = await start(store, { from: 'header' });
    const one = `x-api-key: ${secrets.open}`;
    expect(await sendLines(host, [one])).toEqual({ status: 200, code: null });
    expect(await sendLines(host, [one, one])).toEqual(MALFORMED);
  });
});
