// Every adapter refuses bad options when it is built (Fastify: when it is registered), with the core's
// error type: `InvalidInputError`, code `invalid_input`, and `field` naming the option. Never a TypeError.
import Fastify from 'fastify';
import { InvalidInputError, MemoryKeyStore } from 'keygate';
import { apiKeyAuth as elysiaAuth } from 'keygate/elysia';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth } from 'keygate/fastify';
import { withApiKeyAuth } from 'keygate/fetch';
import { apiKeyAuth as honoAuth } from 'keygate/hono';
import { apiKeyAuth as koaAuth } from 'keygate/koa';
import { KeygateModule } from 'keygate/nestjs';
import { apiKeyMiddleware as nextMiddleware } from 'keygate/next';
import { describe, expect, it } from 'vitest';
import { appModule, createNestApp } from './nest/app.js';

const store = new MemoryKeyStore();

const ADAPTERS: Array<[string, (options: unknown) => unknown]> = [
  ['express', (options) => expressAuth(options as never)],
  [
    'fastify',
    (options) =>
      Fastify()
        .register(fastifyAuth, options as never)
        .ready(),
  ],
  ['fetch', (options) => withApiKeyAuth(() => new Response('ok'), options as never)],
  ['hono', (options) => honoAuth(options as never)],
  ['koa', (options) => koaAuth(options as never)],
  ['elysia', (options) => elysiaAuth(options as never)],
  ['nestjs forRoot', (options) => KeygateModule.forRoot(options as never)],
  [
    'nestjs forRootAsync',
    (options) =>
      createNestApp('express', appModule([KeygateModule.forRootAsync({ useFactory: () => options as never })], [])),
  ],
  // Next's middleware also needs its signing secret; its own options are in next.test.ts.
  [
    'next',
    (options) => nextMiddleware({ secret: 'a signing secret of at least 32 bytes', ...(options as object) } as never),
  ],
];

const BAD_OPTIONS: Array<[string, Record<string, unknown> | undefined, string]> = [
  ['no options at all', undefined, 'store'],
  ['no store', {}, 'store'],
  ['a store without findByHash', { store: { find: () => null } }, 'store'],
  ['a store that is a string', { store: 'memory' }, 'store'],
  ['a clientIp that is a header name', { store, clientIp: 'x-real-ip' }, 'clientIp'],
  ['an onDenied that is not a function', { store, onDenied: { status: 401 } }, 'onDenied'],
  ['a negative retryAfterMs', { store, retryAfterMs: -1 }, 'retryAfterMs'],
  ['an infinite retryAfterMs', { store, retryAfterMs: Number.POSITIVE_INFINITY }, 'retryAfterMs'],
  ['a retryAfterMs as text', { store, retryAfterMs: '5000' }, 'retryAfterMs'],
  ['a header that is not a field name', { store, header: 'x key' }, 'header'],
  ['an upper-case prefix', { store, prefix: 'MK' }, 'prefix'],
  ['a negative timeoutMs', { store, timeoutMs: -1 }, 'timeoutMs'],
  ['an empty permission', { store, permissions: [''] }, 'permissions'],
  ['an empty pepper', { store, pepper: '' }, 'pepper'],
  ['a throttle without check and fail', { store, throttle: {} }, 'throttle'],
  ['a rate limiter without consume', { store, rateLimit: { limiter: {} } }, 'rateLimit.limiter'],
  ['a rate-limit cost as text', { store, rateLimit: { limiter: { consume() {} }, cost: '1' } }, 'rateLimit.cost'],
  [
    'a rate-limit default of 0',
    { store, rateLimit: { limiter: { consume() {} }, default: { limit: 0, windowMs: 1 } } },
    'rateLimit.default.limit',
  ],
];

async function errorOf(build: () => unknown): Promise<unknown> {
  try {
    await build();
  } catch (error) {
    return error;
  }
  return undefined;
}

const CASES = ADAPTERS.flatMap(([adapter, build]) =>
  BAD_OPTIONS.map(([label, options, field]) => [adapter, label, build, options, field] as const),
);

describe('bad adapter options', () => {
  it.each(CASES)('%s refuses %s at construction', async (_, __, build, options, field) => {
    const error = await errorOf(() => build(options));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'invalid_input', field });
  });

  it.each(ADAPTERS.filter(([name]) => name !== 'fastify' && name !== 'nestjs forRootAsync'))(
    '%s throws synchronously, before any request',
    (_, build) => {
      expect(() => build({ store, retryAfterMs: -1 })).toThrow(InvalidInputError);
    },
  );

  it('Fetch refuses a handler that is not a function', () => {
    expect(() => withApiKeyAuth(undefined as never, { store })).toThrow(
      expect.objectContaining({ code: 'invalid_input', field: 'handler' }),
    );
  });

  it.each([
    ['a config.apiKey that is neither false nor an object', true, 'config.apiKey'],
    ['an empty permission in config.apiKey', { permissions: [''] }, 'permissions'],
    ['permissions that are not a list', { permissions: 'email:verify' }, 'permissions'],
  ])('Fastify refuses %s when the route is added', async (_, apiKey, field) => {
    const app = Fastify();
    await app.register(fastifyAuth, { store });
    await app.after();
    const error = await errorOf(() => app.get('/x', { config: { apiKey: apiKey as never } }, async () => 'x'));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'invalid_input', field });
  });
});
