// keygate/next called the way Next calls a middleware: with a `NextRequest`, answering a `Response`.
// A `NextResponse.next()` is followed the way Next follows it: the route gets the request headers the
// middleware set (`x-middleware-override-headers`), and the middleware's own response headers are
// merged into the route's response. next-build.test.ts proves the same through a real `next build`.
import { InvalidInputError, MemoryCreditLedger, MemoryRateLimiter } from 'keygate';
import { withApiKeyAuth } from 'keygate/fetch';
import { apiKeyFromHeaders, apiKeyMiddleware, clientIp, SIGNED_KEY_HEADER } from 'keygate/next';
import { NextRequest } from 'next/server.js';
import { describe, expect, it } from 'vitest';
import { routeOptions } from './apps.js';
import { type CasePath, itAnswersEveryCase, observe, type SendCase } from './cases.js';
import { seedCaseStore } from './fixtures.js';

const fixture = await seedCaseStore();
const secret = 'a test secret of at least thirty-two bytes';
const fromTrustedProxy = (request: Request) => request.headers.get('x-forwarded-for') ?? undefined;

/** The request headers a route behind the middleware receives, as Next's router rebuilds them. */
function forwardedHeaders(response: Response, request: Request): Headers {
  const override = response.headers.get('x-middleware-override-headers');
  if (override === null) return new Headers(request.headers);
  const headers = new Headers();
  for (const name of override.split(',').filter(Boolean)) {
    const value = response.headers.get(`x-middleware-request-${name}`);
    if (value !== null) headers.set(name, value);
  }
  return headers;
}

type Route = (request: Request) => Promise<Response>;
type Middleware = (request: NextRequest) => Promise<Response>;

/** Runs the middleware, then (when it lets the request through) the route, merging their headers as Next does. */
async function throughNext(
  middleware: Middleware,
  route: Route,
  url: string,
  init: { headers?: Record<string, string> } = {},
): Promise<Response> {
  const request = new NextRequest(url, init);
  const answer = await middleware(request);
  if (answer.headers.get('x-middleware-next') !== '1') return answer;
  const reached = await route(new Request(url, { ...init, headers: forwardedHeaders(answer, request) }));
  const headers = new Headers(reached.headers);
  for (const [name, value] of answer.headers) {
    if (!name.startsWith('x-middleware-')) headers.set(name, value);
  }
  return new Response(reached.body, { status: reached.status, headers });
}

/** A route handler that answers `{ keyId }` from the verified headers, 500 when they did not verify. */
async function echoRoute(request: Request): Promise<Response> {
  const key = await apiKeyFromHeaders(request.headers, { secret });
  return key ? Response.json({ keyId: key.id }) : Response.json({ error: 'no verified key' }, { status: 500 });
}

// One middleware per route of the shared table. `/v1/broke` bills, which a middleware cannot: there
// the middleware authenticates without credits and the route handler is `withApiKeyAuth` with them,
// the composition the docs recommend.
const routes = new Map(
  Object.entries(routeOptions(fixture.store)).map(([path, options]) => {
    if ('credits' in options) {
      const { credits: _, ...rest } = options;
      const billed = withApiKeyAuth((_request, key) => Response.json({ keyId: key.id }), {
        ...options,
        clientIp: fromTrustedProxy,
      });
      return [path, { middleware: apiKeyMiddleware({ ...rest, secret, clientIp: fromTrustedProxy }), route: billed }];
    }
    return [
      path,
      { middleware: apiKeyMiddleware({ ...options, secret, clientIp: fromTrustedProxy }), route: echoRoute },
    ];
  }),
);

const sendThroughNext: SendCase = async ({ path, headers }) => {
  const { middleware, route } = routes.get(path as CasePath)!;
  return observe(await throughNext(middleware, route, `http://api.test${path}`, { headers }));
};

describe('Next middleware, called with NextRequest', () => {
  itAnswersEveryCase(
    () => fixture,
    () => sendThroughNext,
  );
});

describe('the signed view the route reads', () => {
  const gate = apiKeyMiddleware({ store: fixture.store, secret, permissions: ['email:verify'], paths: ['/api/v1'] });
  const forwardedBy = async (url: string, headers: Record<string, string>) => {
    const request = new NextRequest(url, { headers });
    return forwardedHeaders(await gate(request), request);
  };

  it("carries the key's whole public view, never its digest", async () => {
    const headers = await forwardedBy('http://app.test/api/v1/verify', { 'x-api-key': fixture.secrets.open });
    const key = await apiKeyFromHeaders(headers, { secret });
    const { hash, ...view } = (await fixture.store.findById(fixture.ids.open))!;
    expect(key).toEqual(view);
    expect(headers.get(SIGNED_KEY_HEADER)).not.toContain(hash);
    expect(key).not.toHaveProperty('hash');
    expect(headers.get(SIGNED_KEY_HEADER)).not.toContain(fixture.secrets.open);
  });

  it("replaces a client's own copy of the header with the middleware's", async () => {
    const forged = await forwardedBy('http://app.test/api/v1/verify', { 'x-api-key': fixture.secrets.open });
    const headers = await forwardedBy('http://app.test/api/v1/verify', {
      'x-api-key': fixture.secrets.limited,
      [SIGNED_KEY_HEADER]: forged.get(SIGNED_KEY_HEADER)!,
    });
    expect((await apiKeyFromHeaders(headers, { secret }))?.id).toBe(fixture.ids.limited);
  });

  it("removes a client's copy on a path outside `paths`, where no key is needed", async () => {
    const captured = await forwardedBy('http://app.test/api/v1/verify', { 'x-api-key': fixture.secrets.open });
    const headers = await forwardedBy('http://app.test/api/health', {
      [SIGNED_KEY_HEADER]: captured.get(SIGNED_KEY_HEADER)!,
    });
    expect(headers.has(SIGNED_KEY_HEADER)).toBe(false);
    expect(await apiKeyFromHeaders(headers, { secret })).toBeNull();
  });

  it('lets a path outside `paths` through without a key, untouched when it carries no signed header', async () => {
    const answer = await gate(new NextRequest('http://app.test/api/health'));
    expect(answer.headers.get('x-middleware-next')).toBe('1');
    expect(answer.headers.has('x-middleware-override-headers')).toBe(false);
  });

  it('refuses a path inside `paths` without a key', async () => {
    expect((await gate(new NextRequest('http://app.test/api/v1'))).status).toBe(401);
    expect((await gate(new NextRequest('http://app.test/api/v10'))).status).toBe(200);
  });

  it.each([
    ['signed under another secret', (v: string) => v, 'another secret of at least thirty-two bytes'],
    [
      'with an altered view',
      (v: string) => v.replace(/\.([^.]+)\./, (_, p: string) => `.${p.slice(0, -2)}AA.`),
      secret,
    ],
    ['with an altered time', (v: string) => v.replace(/^v1\.\d/, 'v1.9'), secret],
    ['twice', (v: string) => `${v}, ${v}`, secret],
    ['empty', () => '', secret],
  ])('reads nothing from a header %s', async (_, change, readWith) => {
    const headers = await forwardedBy('http://app.test/api/v1/verify', { 'x-api-key': fixture.secrets.open });
    headers.set(SIGNED_KEY_HEADER, change(headers.get(SIGNED_KEY_HEADER)!));
    expect(await apiKeyFromHeaders(headers, { secret: readWith })).toBeNull();
  });

  it('reads nothing from a header older than maxAgeMs (60 s by default)', async () => {
    const headers = await forwardedBy('http://app.test/api/v1/verify', { 'x-api-key': fixture.secrets.open });
    const later = (ms: number) => () => Date.now() + ms;
    expect(await apiKeyFromHeaders(headers, { secret, clock: later(50_000) })).not.toBeNull();
    expect(await apiKeyFromHeaders(headers, { secret, clock: later(61_000) })).toBeNull();
    expect(await apiKeyFromHeaders(headers, { secret, maxAgeMs: 5_000, clock: later(6_000) })).toBeNull();
  });

  it.each([
    ['a short secret', { secret: 'too short' }, 'secret'],
    ['no secret', {}, 'secret'],
    ['a negative maxAgeMs', { secret, maxAgeMs: -1 }, 'maxAgeMs'],
  ])('apiKeyFromHeaders refuses %s', async (_, options, field) => {
    await expect(apiKeyFromHeaders(new Headers(), options as never)).rejects.toMatchObject({
      code: 'invalid_input',
      field,
    });
  });
});

describe('apiKeyMiddleware options', () => {
  const store = fixture.store;
  it.each([
    ['no secret', { store }, 'secret'],
    ['a secret shorter than 32 bytes', { store, secret: 'x'.repeat(31) }, 'secret'],
    ['a secret that is not a string', { store, secret: new Uint8Array(32) }, 'secret'],
    [
      'credits, which a middleware cannot settle',
      { store, secret, credits: { ledger: new MemoryCreditLedger() } },
      'credits',
    ],
    ['empty paths', { store, secret, paths: [] }, 'paths'],
    ['a path without its leading slash', { store, secret, paths: ['api'] }, 'paths'],
    ['paths that are not a list', { store, secret, paths: '/api' }, 'paths'],
    ['a clientIp that is a header name', { store, secret, clientIp: 'x-real-ip' }, 'clientIp'],
  ])('refuses %s at construction', (_, options, field) => {
    let error: unknown;
    try {
      apiKeyMiddleware(options as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ code: 'invalid_input', field });
  });

  it('names keygate/fetch in the credits refusal', () => {
    expect(() => apiKeyMiddleware({ store, secret, credits: { ledger: new MemoryCreditLedger() } } as never)).toThrow(
      /withApiKeyAuth from keygate\/fetch/,
    );
  });
});

describe('the client address', () => {
  const allowListed = {
    'x-api-key': fixture.secrets.allowListed,
    'x-forwarded-for': '203.0.113.7',
    'x-real-ip': '203.0.113.7',
  };
  const status = async (options: Partial<Parameters<typeof apiKeyMiddleware>[0]>, request: NextRequest) =>
    (await apiKeyMiddleware({ store: fixture.store, secret, ...options })(request)).status;

  it('is unknown by default, whatever X-Forwarded-For or X-Real-IP say', async () => {
    expect(await status({}, new NextRequest('http://app.test/x', { headers: allowListed }))).toBe(403);
  });

  it('is request.ip where the platform sets it', async () => {
    const request = new NextRequest('http://app.test/x', { headers: { 'x-api-key': fixture.secrets.allowListed } });
    Object.defineProperty(request, 'ip', { value: '203.0.113.7' });
    expect(await status({}, request)).toBe(200);
  });

  it('is X-Real-IP with clientIp.vercel, as on Vercel', async () => {
    expect(
      await status({ clientIp: clientIp.vercel }, new NextRequest('http://app.test/x', { headers: allowListed })),
    ).toBe(200);
  });

  it('is unknown when clientIp throws', async () => {
    const throwing = () => {
      throw new Error('no address');
    };
    expect(await status({ clientIp: throwing }, new NextRequest('http://app.test/x', { headers: allowListed }))).toBe(
      403,
    );
  });
});

describe('rate limits', () => {
  it('sets RateLimit-Policy and RateLimit on the response that continues to the route', async () => {
    const limiter = new MemoryRateLimiter({ clock: () => 1_700_000_000_000 });
    const gate = apiKeyMiddleware({
      store: fixture.store,
      secret,
      rateLimit: { limiter, default: { limit: 5, windowMs: 60_000 } },
    });
    const answer = await gate(new NextRequest('http://app.test/x', { headers: { 'x-api-key': fixture.secrets.open } }));
    expect(answer.headers.get('x-middleware-next')).toBe('1');
    expect(answer.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
    expect(answer.headers.get('ratelimit')).toBe('"default";r=4;t=60');
  });
});

describe('onDenied', () => {
  it('replaces the denial, and never lets a denied request through', async () => {
    const custom = apiKeyMiddleware({
      store: fixture.store,
      secret,
      onDenied: (f) => Response.json({ f: f.code }, { status: 418 }),
    });
    const broken = apiKeyMiddleware({ store: fixture.store, secret, onDenied: failingHook });
    expect((await custom(new NextRequest('http://app.test/x'))).status).toBe(418);
    expect((await broken(new NextRequest('http://app.test/x'))).status).toBe(401);
  });
});

function failingHook(): Response {
  throw new Error('a hook that fails');
}
