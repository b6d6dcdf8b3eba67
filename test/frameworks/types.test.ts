// What a host's editor shows: the key each adapter hands over is the public view, never the record.
import express from 'express';
import Fastify, { type FastifyContextConfig } from 'fastify';
import { Hono } from 'hono';
import { type ApiKeyRecord, MemoryKeyStore, type PublicKey } from 'keygate';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth, type RouteApiKeyConfig } from 'keygate/fastify';
import { withApiKeyAuth } from 'keygate/fetch';
import { type ApiKeyEnv, type ApiKeyVariables, apiKeyAuth as honoAuth } from 'keygate/hono';
import { apiKeyFromHeaders, apiKeyMiddleware } from 'keygate/next';
import type { NextMiddleware } from 'next/server.js';
import { describe, expect, expectTypeOf, it } from 'vitest';

const store = new MemoryKeyStore();

describe('adapter types', () => {
  it("Next: the middleware is Next's middleware type, and the route reads a PublicKey | null", () => {
    const middleware = apiKeyMiddleware({ store, secret: 'a signing secret of at least 32 bytes' });
    expectTypeOf(middleware).toExtend<NextMiddleware>();
    expectTypeOf(apiKeyFromHeaders).returns.resolves.toEqualTypeOf<PublicKey | null>();
    // @ts-expect-error a middleware cannot bill: the option does not type-check (and throws)
    expect(() => apiKeyMiddleware({ store, secret: 'a signing secret of at least 32 bytes', credits: {} })).toThrow(
      /credits/,
    );
  });

  it('Express: req.apiKey is PublicKey | undefined', () => {
    express().get('/', expressAuth({ store }), (req, res) => {
      expectTypeOf(req.apiKey).toEqualTypeOf<PublicKey | undefined>();
      res.end();
    });
  });

  it('Fastify: request.apiKey is PublicKey | null, and route config is typed', async () => {
    const app = Fastify();
    await app.register(fastifyAuth, { store });
    app.get('/', { config: { apiKey: { permissions: ['email:verify'] } } }, async (request) => {
      expectTypeOf(request.apiKey).toEqualTypeOf<PublicKey | null>();
      return '';
    });
    expectTypeOf<FastifyContextConfig['apiKey']>().toEqualTypeOf<RouteApiKeyConfig | undefined>();
    // Fastify infers route config types loosely, so a wrong one is refused when the route is added.
    expect(() => app.get('/bad', { config: { apiKey: true as never } }, async () => '')).toThrow(/config.apiKey/);
  });

  it('Fetch: the handler gets a PublicKey and the rest arguments keep their types', () => {
    const handle = withApiKeyAuth(
      (_request: Request, key, env: { DB: string }) => {
        expectTypeOf(key).toEqualTypeOf<PublicKey>();
        expectTypeOf(key).not.toHaveProperty('hash');
        return new Response(env.DB);
      },
      { store },
    );
    expectTypeOf(handle).toEqualTypeOf<(request: Request, env: { DB: string }) => Promise<Response>>();
  });

  it("Hono: c.get('apiKey') is PublicKey", () => {
    expectTypeOf<ApiKeyVariables['apiKey']>().toEqualTypeOf<PublicKey>();
    const app = new Hono<ApiKeyEnv>();
    app.get('/', honoAuth({ store }), (c) => {
      expectTypeOf(c.get('apiKey')).toEqualTypeOf<PublicKey>();
      return c.text('');
    });
    // Route-level middleware types the variable even on an app without ApiKeyEnv.
    new Hono().get('/', honoAuth({ store }), (c) => {
      expectTypeOf(c.get('apiKey')).toEqualTypeOf<PublicKey>();
      return c.text('');
    });
  });

  it('PublicKey has no digest', () => {
    expectTypeOf<PublicKey>().toEqualTypeOf<Omit<ApiKeyRecord, 'hash'>>();
  });
});
