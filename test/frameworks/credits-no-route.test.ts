// No route, no charge: with the middleware in front of every path, a request that matched no route
// (the framework's own 404) releases its hold, while a route that itself answers 404 for a missing
// resource was served and is charged. The same on every adapter that can sit in front of unknown paths,
// with a real MemoryCreditLedger.

import Elysia from 'elysia';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { MemoryCreditLedger } from 'keygate';
import { apiKeyAuth as elysiaAuth } from 'keygate/elysia';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth } from 'keygate/fastify';
import { type ApiKeyEnv, apiKeyAuth as honoAuth } from 'keygate/hono';
import { apiKeyAuth as koaAuth } from 'keygate/koa';
import Koa from 'koa';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { seedCaseStore } from './fixtures.js';
import { listen } from './servers.js';

const { store, secrets } = await seedCaseStore();
const ACCOUNT = 'acct_1';
const COST = 2;
const closers: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(closers.map((close) => close())));

/** Sends a GET with the billed key; resolves to the status. */
type Get = (path: string) => Promise<number>;

async function overHttp(app: Parameters<typeof listen>[0]): Promise<Get> {
  const { base, close } = await listen(app);
  closers.push(close);
  return async (path) => {
    const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': secrets.limited } });
    await res.arrayBuffer();
    return res.status;
  };
}

// Every app: the middleware in front of everything, `/served` answers 200, `/items/gone` is a route
// that answers 404 itself (a missing resource), and nothing else is routed.
const ADAPTERS: Array<[string, (ledger: MemoryCreditLedger) => Promise<Get>]> = [
  [
    'Express',
    (ledger) => {
      const app = express();
      app.use(expressAuth({ store, credits: { ledger, cost: COST } }));
      app.get('/served', (_req, res) => void res.json({ ok: true }));
      app.get('/items/:id', (_req, res) => void res.status(404).json({ error: 'no such item' }));
      return overHttp(app);
    },
  ],
  [
    'Fastify',
    async (ledger) => {
      const app = Fastify();
      await app.register(fastifyAuth, { store, credits: { ledger, cost: COST } });
      app.get('/served', async () => ({ ok: true }));
      app.get('/items/:id', async (_request, reply) => reply.code(404).send({ error: 'no such item' }));
      await app.ready();
      closers.push(() => app.close());
      return async (path) =>
        (await app.inject({ method: 'GET', url: path, headers: { 'x-api-key': secrets.limited } })).statusCode;
    },
  ],
  [
    'Koa',
    (ledger) => {
      const app = new Koa();
      app.use(koaAuth({ store, credits: { ledger, cost: COST } }));
      app.use((ctx, next) => {
        if (ctx.path === '/served') ctx.body = { ok: true };
        else if (ctx.path.startsWith('/items/')) {
          ctx.status = 404;
          ctx.body = { error: 'no such item' };
        } else return next();
      });
      return overHttp(app);
    },
  ],
  [
    'Hono',
    async (ledger) => {
      const app = new Hono<ApiKeyEnv>();
      app.use('*', honoAuth({ store, credits: { ledger, cost: COST } }));
      app.get('/served', (c) => c.json({ ok: true }));
      app.get('/items/:id', (c) => c.json({ error: 'no such item' }, 404));
      return async (path) => (await app.request(path, { headers: { 'x-api-key': secrets.limited } })).status;
    },
  ],
  [
    'Elysia',
    async (ledger) => {
      const app = new Elysia()
        .use(elysiaAuth({ store, credits: { ledger, cost: COST } }))
        .get('/served', () => ({ ok: true }))
        .get('/items/:id', ({ status }) => status(404, { error: 'no such item' }));
      return async (path) =>
        (await app.handle(new Request(`http://localhost${path}`, { headers: { 'x-api-key': secrets.limited } })))
          .status;
    },
  ],
];

async function funded(): Promise<MemoryCreditLedger> {
  const ledger = new MemoryCreditLedger();
  await ledger.topUp(ACCOUNT, 10);
  return ledger;
}

/** The account's balance once no hold is open (Express and Fastify close holds after the response). */
async function settledBalance(ledger: MemoryCreditLedger, expected: number): Promise<void> {
  await vi.waitFor(async () => expect(await ledger.balance(ACCOUNT)).toBe(expected));
  // A hold still open would show as a lower balance a moment later: give it the time to close.
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await ledger.balance(ACCOUNT)).toBe(expected);
}

describe.each(ADAPTERS)('%s with credits in front of every path', (_, make) => {
  it('charges nothing for a request that matched no route', async () => {
    const ledger = await funded();
    const get = await make(ledger);
    expect(await get('/no/such/route')).toBe(404);
    await settledBalance(ledger, 10);
    expect((await ledger.entries(ACCOUNT)).map((e) => e.kind)).toEqual(['top_up']);
  });

  it('charges a served route, and a route that answers 404 for a missing resource', async () => {
    const ledger = await funded();
    const get = await make(ledger);
    expect(await get('/served')).toBe(200);
    await settledBalance(ledger, 8);
    expect(await get('/items/42')).toBe(404);
    await settledBalance(ledger, 6);
  });
});
