// Every adapter refuses an option it does not know when it is built (Fastify: registered; NestJS's
// forRootAsync: when the application starts), naming it and the option it most likely meant: a
// misspelt `permisions` must never leave a route open to any valid key. Each adapter's own options
// are still taken.
import Fastify from 'fastify';
import { InvalidInputError, MemoryCreditLedger, MemoryKeyStore, MemoryRateLimiter } from 'keygate';
import { apiKeyAuth as elysiaAuth } from 'keygate/elysia';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth } from 'keygate/fastify';
import { withApiKeyAuth } from 'keygate/fetch';
import { apiKeyAuth as honoAuth } from 'keygate/hono';
import { apiKeyAuth as koaAuth } from 'keygate/koa';
import { KeygateModule } from 'keygate/nestjs';
import { apiKeyFromHeaders, apiKeyMiddleware as nextMiddleware } from 'keygate/next';
import { describe, expect, it } from 'vitest';
import { appModule, createNestApp } from './nest/app.js';

const store = new MemoryKeyStore();
const ledger = new MemoryCreditLedger();
const limiter = new MemoryRateLimiter();
const SECRET = 'a signing secret of at least 32 bytes';

type Build = (options: Record<string, unknown>) => unknown;

/** Each adapter: its name, the name its messages give it, and how it is built with these options. */
const ADAPTERS: Array<[string, string, Build]> = [
  ['express', 'apiKeyAuth (Express)', (options) => expressAuth(options as never)],
  [
    'fastify',
    'apiKeyAuth (Fastify)',
    async (options) => {
      const app = Fastify();
      try {
        await app.register(fastifyAuth, options as never).ready();
      } finally {
        await app.close();
      }
    },
  ],
  ['fetch', 'withApiKeyAuth', (options) => withApiKeyAuth(() => new Response('ok'), options as never)],
  ['hono', 'apiKeyAuth (Hono)', (options) => honoAuth(options as never)],
  ['koa', 'apiKeyAuth (Koa)', (options) => koaAuth(options as never)],
  ['elysia', 'apiKeyAuth (Elysia)', (options) => elysiaAuth(options as never)],
  ['nestjs forRoot', 'KeygateModule.forRoot', (options) => KeygateModule.forRoot(options as never)],
  [
    'nestjs forRootAsync',
    'KeygateModule.forRootAsync (the options useFactory returns)',
    async (options) => {
      const module = KeygateModule.forRootAsync({ useFactory: () => options as never });
      const app = await createNestApp('express', appModule([module], []));
      await app.close();
    },
  ],
  ['next', 'apiKeyMiddleware', (options) => nextMiddleware({ secret: SECRET, ...options } as never)],
];

/** What a user misspells, the field the refusal names, and the option it suggests. */
const MISSPELT: Array<[Record<string, unknown>, string, string]> = [
  [{ permisions: ['admin'] }, 'permisions', 'permissions'],
  [{ credit: { ledger } }, 'credit', 'credits'],
  [{ ratelimit: { limiter } }, 'ratelimit', 'rateLimit'],
  [{ timeout: 500 }, 'timeout', 'timeoutMs'],
];

async function refusalOf(build: () => unknown): Promise<InvalidInputError> {
  try {
    await build();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }
  throw new Error('expected an InvalidInputError, nothing was thrown');
}

const CASES = ADAPTERS.flatMap(([adapter, where, build]) =>
  MISSPELT.map(([options, field, near]) => [adapter, field, where, build, options, near] as const),
);

describe('an adapter refuses an option it does not know, naming the nearest one', () => {
  it.each(CASES)('%s refuses %s', async (_, field, where, build, options, near) => {
    const error = await refusalOf(() => build({ store, ...options }));
    expect(error.code).toBe('invalid_input');
    expect(error.field).toBe(field);
    expect(error.issues).toEqual([expect.objectContaining({ field, reason: 'unknown_option' })]);
    expect(error.message).toContain(`not an option of ${where}`);
    expect(error.message).toContain(`did you mean \`${near}\`?`);
  });
});

describe("each adapter's own options are still taken", () => {
  const onDenied = () => undefined;
  const clientIp = () => '203.0.113.7';
  it.each<[string, () => unknown]>([
    ['express: onDenied', () => expressAuth({ store, onDenied })],
    ['koa: onDenied', () => koaAuth({ store, onDenied })],
    ['hono: clientIp', () => honoAuth({ store, clientIp })],
    ['elysia: clientIp', () => elysiaAuth({ store, clientIp })],
    ['fetch: clientIp', () => withApiKeyAuth(() => new Response('ok'), { store, clientIp })],
    ['next: secret and paths', () => nextMiddleware({ store, secret: SECRET, paths: ['/api'] })],
    ['nestjs forRoot: globalGuard', () => KeygateModule.forRoot({ store, globalGuard: false })],
    [
      'nestjs forRootAsync: imports, inject and globalGuard',
      async () => {
        const module = KeygateModule.forRootAsync({
          imports: [],
          inject: [],
          globalGuard: false,
          useFactory: () => ({ store }),
        });
        await (await createNestApp('express', appModule([module], []))).close();
      },
    ],
    [
      'fastify: config.apiKey permissions and cost',
      async () => {
        const app = Fastify();
        await app.register(fastifyAuth, { store, credits: { ledger, cost: 1 } });
        app.get('/x', { config: { apiKey: { permissions: ['email:read'], cost: 2 } } }, async () => 'x');
        await app.ready();
        await app.close();
      },
    ],
  ])('%s', async (_, build) => {
    const built = (async () => void (await build()))();
    await expect(built).resolves.toBeUndefined();
  });
});

describe('the options a route or a call gives are checked too', () => {
  it('Fastify refuses a misspelt member of config.apiKey when the route is added', async () => {
    const app = Fastify();
    await app.register(fastifyAuth, { store });
    await app.after();
    const error = await refusalOf(() =>
      app.get('/admin', { config: { apiKey: { permisions: ['admin'] } as never } }, async () => 'x'),
    );
    expect(error.field).toBe('config.apiKey.permisions');
    expect(error.issues).toEqual([expect.objectContaining({ reason: 'unknown_option' })]);
    expect(error.message).toContain('not an option of config.apiKey of /admin; did you mean `permissions`?');
    await app.close();
  });

  it("NestJS refuses globalGuard among a forRootAsync factory's options, pointing to forRootAsync", async () => {
    const module = KeygateModule.forRootAsync({ useFactory: () => ({ store, globalGuard: false }) as never });
    const error = await refusalOf(() => createNestApp('express', appModule([module], [])));
    expect(error.field).toBe('globalGuard');
    expect(error.issues).toEqual([expect.objectContaining({ reason: 'unknown_option' })]);
    expect(error.message).toContain('give it to forRootAsync itself');
  });

  it('NestJS refuses a misspelt member of forRootAsync', async () => {
    const error = await refusalOf(() =>
      KeygateModule.forRootAsync({ useFactory: () => ({ store }), injects: [] } as never),
    );
    expect(error.field).toBe('injects');
    expect(error.message).toContain('did you mean `inject`?');
  });

  it("Next's apiKeyFromHeaders refuses a misspelt member", async () => {
    const error = await refusalOf(() => apiKeyFromHeaders(new Headers(), { secret: SECRET, maxAge: 1000 } as never));
    expect(error.field).toBe('maxAge');
    expect(error.message).toContain('did you mean `maxAgeMs`?');
  });
});
