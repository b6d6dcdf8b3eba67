// Credits through each adapter with a real MemoryCreditLedger: the handler gets the hold the adapter's
// way, and the handler's outcome decides (a status below 500 settles, a 5xx or a throw releases).
// Express and Fastify close the hold without delaying the response, so tests wait for the ledger.
import { serve } from '@hono/node-server';
import { HttpException } from '@nestjs/common';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { type HeldCredits, MemoryCreditLedger } from 'keygate';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth } from 'keygate/fastify';
import { apiKeyCredits, withApiKeyAuth } from 'keygate/fetch';
import { type ApiKeyEnv, apiKeyAuth as honoAuth } from 'keygate/hono';
import { KeygateModule } from 'keygate/nestjs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { seedCaseStore } from './fixtures.js';
import { appModule, controller, createNestApp, listenOn, type NestPlatform } from './nest/app.js';
import { listen } from './servers.js';

const { store, secrets, ids } = await seedCaseStore();
const ACCOUNT = 'acct_1';
const COST = 2;
const closers: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(closers.map((close) => close())));

type Outcome = 'ok' | 'missing' | 'broken' | 'throw';
/** What each route's handler does: answer 200, 404 or 503 (echoing the hold it was handed), or throw. */
const STATUS = { ok: 200, missing: 404, broken: 503 } as const;
type Send = (outcome: Outcome, key: string) => Promise<{ status: number; credits: HeldCredits | null }>;

async function overHttp(base: string, outcome: Outcome, key: string) {
  const res = await fetch(`${base}/${outcome}`, { headers: { 'x-api-key': key } });
  const text = await res.text();
  return { status: res.status, credits: text.startsWith('{') ? (JSON.parse(text).credits ?? null) : null };
}

async function expressApp(ledger: MemoryCreditLedger): Promise<Send> {
  const app = express();
  app.get('/:outcome', expressAuth({ store, credits: { ledger, cost: COST } }), (req, res) => {
    const outcome = req.params.outcome as Outcome;
    if (outcome === 'throw') throw new Error('handler failed');
    res.status(STATUS[outcome]).json({ credits: req.apiKeyCredits ?? null });
  });
  const { base, close } = await listen(app);
  closers.push(close);
  return (outcome, key) => overHttp(base, outcome, key);
}

async function fastifyApp(ledger: MemoryCreditLedger): Promise<Send> {
  const app = Fastify();
  await app.register(fastifyAuth, { store, credits: { ledger, cost: COST } });
  app.get('/:outcome', async (request, reply) => {
    const outcome = (request.params as { outcome: Outcome }).outcome;
    if (outcome === 'throw') throw new Error('handler failed');
    return reply.code(STATUS[outcome]).send({ credits: request.apiKeyCredits });
  });
  await app.ready();
  closers.push(() => app.close());
  return async (outcome, key) => {
    const res = await app.inject({ method: 'GET', url: `/${outcome}`, headers: { 'x-api-key': key } });
    return { status: res.statusCode, credits: res.body.startsWith('{') ? (res.json().credits ?? null) : null };
  };
}

async function fetchApp(ledger: MemoryCreditLedger): Promise<Send> {
  const handler = withApiKeyAuth(
    (request) => {
      const outcome = new URL(request.url).pathname.slice(1) as Outcome;
      if (outcome === 'throw') throw new Error('handler failed');
      return Response.json({ credits: apiKeyCredits(request) ?? null }, { status: STATUS[outcome] });
    },
    { store, credits: { ledger, cost: COST } },
  );
  return async (outcome, key) => {
    try {
      const res = await handler(new Request(`http://api.test/${outcome}`, { headers: { 'x-api-key': key } }));
      const text = await res.text();
      return { status: res.status, credits: text.startsWith('{') ? (JSON.parse(text).credits ?? null) : null };
    } catch {
      return { status: 500, credits: null }; // what the runtime answers for a handler that throws
    }
  };
}

async function honoApp(ledger: MemoryCreditLedger): Promise<Send> {
  const app = new Hono<ApiKeyEnv>();
  app.onError((_error, c) => c.text('failed', 500)); // Hono's own handler would log the error
  app.use('*', honoAuth({ store, credits: { ledger, cost: COST } }));
  app.get('/:outcome', (c) => {
    const outcome = c.req.param('outcome') as Outcome;
    if (outcome === 'throw') throw new Error('handler failed');
    return c.json({ credits: c.get('apiKeyCredits') ?? null }, STATUS[outcome]);
  });
  return async (outcome, key) => {
    const res = await app.request(`/${outcome}`, { headers: { 'x-api-key': key } });
    const text = await res.text();
    return { status: res.status, credits: text.startsWith('{') ? (JSON.parse(text).credits ?? null) : null };
  };
}

/** Nest on either platform: the hold is `req.apiKeyCredits`; a 404 or 503 is an HttpException, a throw Nest's 500. */
async function nestApp(platform: NestPlatform, ledger: MemoryCreditLedger): Promise<Send> {
  const route = controller([
    {
      path: '/:outcome',
      handle: (_key, req) => {
        const outcome = (req as unknown as { params: { outcome: Outcome } }).params.outcome;
        if (outcome === 'throw') throw new Error('handler failed');
        const body = { credits: req.apiKeyCredits ?? null };
        if (outcome === 'ok') return body;
        throw new HttpException(body, STATUS[outcome]);
      },
    },
  ]);
  const app = await createNestApp(
    platform,
    appModule([KeygateModule.forRoot({ store, credits: { ledger, cost: COST } })], [route]),
  );
  const base = await listenOn(app);
  closers.push(() => app.close());
  return (outcome, key) => overHttp(base, outcome, key);
}

const ADAPTERS: Array<[string, (ledger: MemoryCreditLedger) => Promise<Send>]> = [
  ['Express', expressApp],
  ['Fastify', fastifyApp],
  ['Fetch', fetchApp],
  ['Hono', honoApp],
  ['Nest on Express', (ledger) => nestApp('express', ledger)],
  ['Nest on Fastify', (ledger) => nestApp('fastify', ledger)],
];

async function funded(): Promise<MemoryCreditLedger> {
  const ledger = new MemoryCreditLedger();
  await ledger.topUp(ACCOUNT, 10);
  return ledger;
}

/** Waits until the account's entries and balance are as given (the hold has been closed). */
async function settlesTo(ledger: MemoryCreditLedger, balance: number, kinds: string[]) {
  await vi.waitFor(async () => {
    expect({
      balance: await ledger.balance(ACCOUNT),
      entries: (await ledger.entries(ACCOUNT)).map((e) => [e.kind, e.amount, e.keyId ?? null]),
    }).toEqual({
      balance,
      entries: kinds.map((kind) => (kind === 'charge' ? ['charge', -COST, ids.limited] : ['top_up', 10, null])),
    });
  });
}

describe.each(ADAPTERS)('%s with credits', (_, make) => {
  it('hands the handler the hold and settles it on a 2xx: one charge entry, the balance down by the cost', async () => {
    const ledger = await funded();
    const send = await make(ledger);
    const got = await send('ok', secrets.limited);
    expect(got).toEqual({ status: 200, credits: { holdId: expect.any(String), cost: COST, balance: 8 } });
    await settlesTo(ledger, 8, ['charge', 'top_up']);
  });

  it('settles on a 4xx: the work was done', async () => {
    const ledger = await funded();
    const send = await make(ledger);
    expect((await send('missing', secrets.limited)).status).toBe(404);
    await settlesTo(ledger, 8, ['charge', 'top_up']);
  });

  it('releases on a 5xx: no entry, the balance restored', async () => {
    const ledger = await funded();
    const send = await make(ledger);
    expect((await send('broken', secrets.limited)).status).toBe(503);
    await settlesTo(ledger, 10, ['top_up']);
  });

  it('releases when the handler throws', async () => {
    const ledger = await funded();
    const send = await make(ledger);
    expect((await send('throw', secrets.limited)).status).toBe(500);
    await settlesTo(ledger, 10, ['top_up']);
  });

  it('never bills a test key: no hold handed over, no entry', async () => {
    const ledger = await funded();
    const send = await make(ledger);
    expect(await send('ok', secrets.open)).toEqual({ status: 200, credits: null });
    expect(await ledger.entries(ACCOUNT)).toHaveLength(1);
    expect(await ledger.balance(ACCOUNT)).toBe(10);
  });

  it('answers 402 once the balance cannot cover the cost, and the settled requests add up', async () => {
    const ledger = await funded();
    const send = await make(ledger);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await send('ok', secrets.limited)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 402]);
    await settlesTo(ledger, 0, ['charge', 'charge', 'charge', 'charge', 'charge', 'top_up']);
  });
});

describe('Express with credits, a client that disconnects before the handler answers', () => {
  it('settles when the handler then answers 200: its outcome decides, not the client', async () => {
    const ledger = await funded();
    let gone: () => void = () => {};
    const clientGone = new Promise<void>((resolve) => {
      gone = resolve;
    });
    const app = express();
    app.get('/slow', expressAuth({ store, credits: { ledger, cost: COST } }), (req, res) => {
      res.on('close', () => gone());
      void clientGone.then(() => res.json({ done: true, holdId: req.apiKeyCredits?.holdId }));
    });
    const { base, close } = await listen(app);
    closers.push(close);
    const abort = new AbortController();
    const request = fetch(`${base}/slow`, { headers: { 'x-api-key': secrets.limited }, signal: abort.signal });
    await vi.waitFor(async () => expect(await ledger.balance(ACCOUNT)).toBe(8)); // held: the handler runs
    abort.abort();
    await expect(request).rejects.toThrow();
    await clientGone;
    await settlesTo(ledger, 8, ['charge', 'top_up']);
  });
});

describe('Fastify with credits', () => {
  async function batchApp(ledger: MemoryCreditLedger) {
    const app = Fastify();
    await app.register(fastifyAuth, {
      store,
      credits: { ledger, cost: ({ native }) => ((native.body as { emails?: unknown[] }).emails ?? []).length },
    });
    app.post('/v1/batch', async (request) => ({ credits: request.apiKeyCredits }));
    app.post(
      '/v1/priced',
      { config: { apiKey: { cost: ({ native }) => 5 * (native.body as { emails: unknown[] }).emails.length } } },
      async (request) => ({ credits: request.apiKeyCredits }),
    );
    app.post('/health', { config: { apiKey: false } }, async (request) => ({ credits: request.apiKeyCredits }));
    await app.ready();
    closers.push(() => app.close());
    return (url: string, emails: number) =>
      app.inject({
        method: 'POST',
        url,
        headers: { 'x-api-key': secrets.limited },
        payload: { emails: Array.from({ length: emails }, (_, i) => `u${i}@example.com`) },
      });
  }

  it('holds after the body is parsed, so a cost function can read the batch size', async () => {
    const ledger = await funded();
    const post = await batchApp(ledger);
    const res = await post('/v1/batch', 3);
    expect(res.json()).toEqual({ credits: { holdId: expect.any(String), cost: 3, balance: 7 } });
    await vi.waitFor(async () =>
      expect((await ledger.entries(ACCOUNT))[0]).toMatchObject({ kind: 'charge', amount: -3 }),
    );
  });

  it("takes a route's own cost from config.apiKey.cost", async () => {
    const ledger = await funded();
    const post = await batchApp(ledger);
    expect((await post('/v1/priced', 2)).json()).toMatchObject({ credits: { cost: 10, balance: 0 } });
    expect((await post('/v1/priced', 1)).statusCode).toBe(402);
  });

  it('never bills a route with config.apiKey false', async () => {
    const ledger = await funded();
    const post = await batchApp(ledger);
    expect((await post('/health', 4)).json()).toEqual({ credits: null });
    expect(await ledger.balance(ACCOUNT)).toBe(10);
  });

  it('refuses a route cost on a plugin without credits, naming config.apiKey.cost', async () => {
    const app = Fastify();
    await app.register(fastifyAuth, { store });
    expect(() => app.post('/x', { config: { apiKey: { cost: 2 } } }, async () => 'x')).toThrow(
      expect.objectContaining({ field: 'config.apiKey.cost' }),
    );
  });
});

// Hono over a real socket, so a Node server's answer to a throwing handler is covered too.
describe('Hono on @hono/node-server with credits', () => {
  it('settles a 200 served over a socket', async () => {
    const ledger = await funded();
    const app = new Hono<ApiKeyEnv>();
    app.use('*', honoAuth({ store, credits: { ledger, cost: COST } }));
    app.get('/ok', (c) => c.json({ credits: c.get('apiKeyCredits') ?? null }));
    const base = await new Promise<string>((resolve) => {
      const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
        closers.push(() => new Promise((r) => server.close(() => r())));
        resolve(`http://127.0.0.1:${info.port}`);
      });
    });
    expect((await overHttp(base, 'ok', secrets.limited)).status).toBe(200);
    await settlesTo(ledger, 8, ['charge', 'top_up']);
  });
});
