// keygate/koa on Koa 3 (`koa`) and Koa 2 (`koa2`, an npm alias): the shared case table over a real
// socket, then what is Koa's own: `app.proxy` deciding the address, `ctx.state`, credits around
// `await next()`, and the `onDenied` hook.
import { type HeldCredits, MemoryCreditLedger, MemoryRateLimiter } from 'keygate';
import { createDenialResponder, rateLimitHeaderFields } from 'keygate/adapter-kit';
import { apiKeyAuth, type KoaApiKeyAuthOptions } from 'keygate/koa';
import Koa3 from 'koa';
import koa2 from 'koa2';
import { afterAll, describe, expect, it } from 'vitest';
import { itAnswersEveryCase, sendOverHttp } from './cases.js';
import { LIMITED, seedCaseStore } from './fixtures.js';
import { createKoaApp, type KoaClass } from './koa-app.js';
import { listen } from './servers.js';

const fixture = await seedCaseStore();
const { store, secrets, ids } = fixture;
const closers: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(closers.map((close) => close())));

async function served(app: Koa3): Promise<string> {
  const { base, close } = await listen(app);
  closers.push(close);
  return base;
}

const MAJORS: Array<[string, KoaClass]> = [
  ['Koa 3', Koa3],
  ['Koa 2', koa2],
];

/** An app whose one guarded route runs `handler` after the middleware. */
function guarded(KoaApp: KoaClass, options: KoaApiKeyAuthOptions, handler: Koa3.Middleware, proxy = false): Koa3 {
  const app = new KoaApp();
  app.proxy = proxy;
  app.silent = true; // the throwing handlers below would be logged by Koa's default error handler
  app.use(apiKeyAuth(options) as Koa3.Middleware);
  app.use(handler);
  return app;
}

describe.each(MAJORS)('%s', (major, KoaApp) => {
  it('is the major it says', async () => {
    const name = KoaApp === Koa3 ? 'koa' : 'koa2';
    const { version } = (await import(`${name}/package.json`, { with: { type: 'json' } })).default;
    expect(version.split('.')[0]).toBe(major.slice(-1));
  });

  describe('the shared case table, real socket', () => {
    const base = served(createKoaApp(KoaApp, store));
    itAnswersEveryCase(
      () => fixture,
      () => sendOverHttp(base),
    );
  });

  describe('the client address is ctx.ip', () => {
    const echo: Koa3.Middleware = (ctx) => {
      ctx.body = { keyId: ctx.state.apiKey.id };
    };
    const allowListed = { 'x-api-key': secrets.allowListed, 'x-forwarded-for': '203.0.113.7' };

    it('ignores X-Forwarded-For when app.proxy is false (the default): the socket address is outside the allow list', async () => {
      const base = await served(guarded(KoaApp, { store }, echo, false));
      const res = await fetch(`${base}/`, { headers: allowListed });
      expect(res.status).toBe(403);
      expect((await res.json()).code).toBe('ip_not_allowed');
    });

    it('honours X-Forwarded-For when app.proxy is true', async () => {
      const base = await served(guarded(KoaApp, { store }, echo, true));
      const res = await fetch(`${base}/`, { headers: allowListed });
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 200,
        body: { keyId: ids.allowListed },
      });
    });

    it("reads app.proxyIpHeader, Koa's own setting", async () => {
      const app = guarded(KoaApp, { store }, echo, true);
      app.proxyIpHeader = 'x-real-ip';
      const base = await served(app);
      const forged = await fetch(`${base}/`, { headers: allowListed });
      const real = await fetch(`${base}/`, {
        headers: { 'x-api-key': secrets.allowListed, 'x-real-ip': '203.0.113.9' },
      });
      expect([forged.status, real.status]).toEqual([403, 200]);
    });
  });

  it('sets ctx.state.apiKey to the public view: no secret, no hash', async () => {
    const base = await served(
      guarded(KoaApp, { store }, (ctx) => {
        ctx.body = ctx.state.apiKey;
      }),
    );
    const res = await fetch(`${base}/`, { headers: { 'x-api-key': secrets.open } });
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ id: ids.open, accountId: 'acct_1', name: 'open', mode: 'test' });
    expect(Object.keys(JSON.parse(text))).not.toContain('hash');
    expect(text).not.toContain(secrets.open);
  });

  it('sets the rate-limit fields before next(): on a 200, and on what the handler answers otherwise', async () => {
    const limiter = new MemoryRateLimiter({ clock: () => 1_700_000_000_000 });
    const base = await served(
      guarded(KoaApp, { store, rateLimit: { limiter, cost: 0 } }, (ctx) => {
        ctx.status = ctx.query.status ? Number(ctx.query.status) : 200;
        ctx.body = { seen: ctx.response.get('ratelimit') };
      }),
    );
    const fields = rateLimitHeaderFields({ ...LIMITED, remaining: LIMITED.limit, resetMs: LIMITED.windowMs });
    for (const status of [200, 400]) {
      const res = await fetch(`${base}/?status=${status}`, { headers: { 'x-api-key': secrets.limited } });
      expect({
        status: res.status,
        policy: res.headers.get('ratelimit-policy'),
        state: res.headers.get('ratelimit'),
        body: await res.json(),
      }).toEqual({
        status,
        policy: fields['ratelimit-policy'],
        state: fields.ratelimit,
        body: { seen: fields.ratelimit },
      });
    }
  });

  describe('credits: held before next(), closed after it', () => {
    const ACCOUNT = 'acct_1';
    const COST = 2;

    async function billedApp() {
      const ledger = new MemoryCreditLedger();
      await ledger.topUp(ACCOUNT, 10);
      const base = await served(
        guarded(KoaApp, { store, credits: { ledger, cost: COST } }, (ctx) => {
          if (ctx.path === '/throw') throw new Error('handler failed');
          ctx.status = Number(ctx.path.slice(1));
          ctx.body = { credits: (ctx.state.apiKeyCredits as HeldCredits | undefined) ?? null };
        }),
      );
      const send = async (path: string, key = secrets.limited) => {
        const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
        const text = await res.text();
        return { status: res.status, credits: text.startsWith('{') ? JSON.parse(text).credits : null };
      };
      const ledgerState = async () => ({
        balance: await ledger.balance(ACCOUNT),
        kinds: (await ledger.entries(ACCOUNT)).map((entry) => entry.kind),
      });
      return { send, ledgerState };
    }

    it('hands the handler the hold in ctx.state.apiKeyCredits and settles it on a 2xx', async () => {
      const { send, ledgerState } = await billedApp();
      expect(await send('/200')).toEqual({
        status: 200,
        credits: { holdId: expect.any(String), cost: COST, balance: 8 },
      });
      expect(await ledgerState()).toEqual({ balance: 8, kinds: ['charge', 'top_up'] });
    });

    it('settles on a 4xx: the work was done', async () => {
      const { send, ledgerState } = await billedApp();
      expect((await send('/404')).status).toBe(404);
      expect(await ledgerState()).toEqual({ balance: 8, kinds: ['charge', 'top_up'] });
    });

    it('releases on a 5xx: the balance restored, no charge', async () => {
      const { send, ledgerState } = await billedApp();
      expect((await send('/503')).status).toBe(503);
      expect(await ledgerState()).toEqual({ balance: 10, kinds: ['top_up'] });
    });

    it("releases when a later middleware throws, and rethrows to Koa's error handling (500)", async () => {
      const { send, ledgerState } = await billedApp();
      expect((await send('/throw')).status).toBe(500);
      expect(await ledgerState()).toEqual({ balance: 10, kinds: ['top_up'] });
    });

    it('holds nothing for a test key', async () => {
      const { send, ledgerState } = await billedApp();
      expect(await send('/200', secrets.open)).toEqual({ status: 200, credits: null });
      expect(await ledgerState()).toEqual({ balance: 10, kinds: ['top_up'] });
    });
  });

  describe('onDenied', () => {
    const standard = createDenialResponder()({ code: 'missing_api_key' });
    const never: Koa3.Middleware = () => {
      throw new Error('the handler must not run');
    };

    it("sends the hook's own answer when it sets ctx.body", async () => {
      const base = await served(
        guarded(
          KoaApp,
          {
            store,
            onDenied: (failure, ctx) => {
              ctx.status = failure.status;
              ctx.body = { error: failure.code };
            },
          },
          never,
        ),
      );
      const res = await fetch(`${base}/`);
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 401,
        body: { error: 'missing_api_key' },
      });
    });

    it.each([
      ['throws', () => Promise.reject(new Error('hook failed'))],
      [
        'sets no body',
        (_failure: unknown, ctx: Koa3.Context) => {
          ctx.status = 200;
        },
      ],
    ])('sends the standard denial when the hook %s', async (_, hook) => {
      const base = await served(guarded(KoaApp, { store, onDenied: hook as never }, never));
      const res = await fetch(`${base}/`);
      expect({ status: res.status, type: res.headers.get('content-type'), body: await res.text() }).toEqual({
        status: standard.status,
        type: 'application/problem+json',
        body: standard.body,
      });
    });
  });
});
