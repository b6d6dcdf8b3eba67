// What keygate/nestjs adds to the case table (nest.test.ts): the global guard, Public(),
// RequirePermissions(), @ApiKey(), forRootAsync, globalGuard: false with UseGuards, onDenied, and
// options refused when the module is made. Nest 12 in this process, on Express and on Fastify.
import { Controller, Module, UseGuards } from '@nestjs/common';
import { InvalidInputError, KeyManager, MemoryKeyStore, MemoryRateLimiter, type PublicKey } from 'keygate';
import { createDenialResponder } from 'keygate/adapter-kit';
import { ApiKeyGuard, KeygateModule, type KeygateModuleOptions, Public, RequirePermissions } from 'keygate/nestjs';
import { afterAll, describe, expect, it } from 'vitest';
import { INHERITED_ROUTE_ORDERS } from '../fixtures/attacks.js';
import { appModule, controller, createNestApp, listenOn, type NestPlatform, type TestRoute } from './nest/app.js';

const store = new MemoryKeyStore();
const keys = new KeyManager({ store });
const make = (name: string, permissions: string[], extra = {}) =>
  keys.create({ accountId: 'acct_nest', name, mode: 'test', permissions, ...extra });
const read = await make('read', ['email:read']);
const verify = await make('verify', ['email:verify']);
const both = await make('both', ['email:read', 'email:verify']);
const limited = await make('limited', ['email:read'], { rateLimit: { limit: 5, windowMs: 60_000 } });

const closers: Array<() => Promise<void>> = [];
afterAll(() => Promise.all(closers.map((close) => close())));

type Imported = Parameters<typeof appModule>[0][number];

/** Serves these controllers under a keygate module; returns a GET helper. */
async function serve(platform: NestPlatform, keygate: Imported, controllers: ReturnType<typeof controller>[]) {
  const app = await createNestApp(platform, appModule([keygate], controllers));
  const base = await listenOn(app);
  closers.push(() => app.close());
  return async (path: string, key?: string) => {
    const res = await fetch(`${base}${path}`, { headers: key ? { 'x-api-key': key } : {} });
    const text = await res.text();
    return { status: res.status, res, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
  };
}

const echo: TestRoute['handle'] = (key) => ({ keyId: key?.id ?? null });
const route = (path: string, decorators: MethodDecorator[] = []): TestRoute => ({ path, handle: echo, decorators });
const forRoot = (options: Partial<KeygateModuleOptions> = {}) =>
  KeygateModule.forRoot({ store, permissions: ['email:read'], ...options });
const denial = createDenialResponder();

describe.each(['express', 'fastify'] as const)('Nest 12 on %s', (platform) => {
  it('the global guard refuses every route without a key, in every controller and imported module', async () => {
    class Feature {}
    Module({ controllers: [controller([route('/feature')])] })(Feature);
    const get = await serve(platform, forRoot(), [controller([route('/a'), route('/b')])]);
    const app2 = await createNestApp(platform, appModule([forRoot(), Feature], []));
    const base2 = await listenOn(app2);
    closers.push(() => app2.close());
    const want = denial({ code: 'missing_api_key' });
    for (const got of [await get('/a'), await get('/b')]) {
      expect({ status: got.status, type: got.res.headers.get('content-type'), body: got.text }).toEqual({
        status: 401,
        type: 'application/problem+json',
        body: want.body,
      });
    }
    expect((await fetch(`${base2}/feature`)).status).toBe(401);
    expect((await get('/a', read.secret)).json).toEqual({ keyId: read.key.id });
  });

  it('Public() on a route opens that route only', async () => {
    const get = await serve(platform, forRoot(), [controller([route('/open', [Public()]), route('/closed')])]);
    expect(await get('/open')).toMatchObject({ status: 200, json: { keyId: null } });
    expect((await get('/closed')).status).toBe(401);
  });

  it('Public() on a controller opens all its routes, not the other controllers', async () => {
    const open = controller([route('/health'), route('/status')], [Public()], 'public');
    const get = await serve(platform, forRoot(), [open, controller([route('/closed')])]);
    expect((await get('/public/health')).status).toBe(200);
    expect((await get('/public/status')).status).toBe(200);
    expect((await get('/closed')).status).toBe(401);
  });

  it("RequirePermissions adds to forRoot's permissions: a key needs both", async () => {
    const get = await serve(platform, forRoot(), [
      controller([route('/verify', [RequirePermissions('email:verify')]), route('/read')]),
    ]);
    const refused = denial({ code: 'insufficient_permissions' });
    expect(await get('/verify', read.secret)).toMatchObject({ status: 403, text: refused.body });
    expect(await get('/verify', verify.secret)).toMatchObject({ status: 403, text: refused.body });
    expect(await get('/verify', both.secret)).toMatchObject({ status: 200, json: { keyId: both.key.id } });
    expect((await get('/read', read.secret)).status).toBe(200);
  });

  it("RequirePermissions on a controller and on its route: the route needs both sets and forRoot's", async () => {
    const admin = await make('admin', ['email:read', 'email:verify', 'keys:admin']);
    const get = await serve(platform, forRoot(), [
      controller([route('/rotate', [RequirePermissions('keys:admin')])], [RequirePermissions('email:verify')], 'k'),
    ]);
    expect((await get('/k/rotate', both.secret)).status).toBe(403);
    expect((await get('/k/rotate', admin.secret)).status).toBe(200);
  });

  it.each(INHERITED_ROUTE_ORDERS)(
    'a route inherited from one base class answers by the controller that serves it ($name)',
    async ({ order }) => {
      // One handler function, three controllers: each keeps its own Public() and RequirePermissions().
      const [base] = [controller([route('/item')])] as [new () => object];
      const subclass = (prefix: string, decorators: ClassDecorator[]) => {
        const Sub = class extends base {};
        for (const decorate of [Controller(prefix), ...decorators]) decorate(Sub);
        return Sub;
      };
      const get = await serve(platform, forRoot(), [
        subclass('open', [Public()]),
        subclass('guarded', []),
        subclass('strict', [RequirePermissions('email:verify')]),
      ]);
      const expected: Record<string, () => Promise<void>> = {
        open: async () => expect(await get('/open/item')).toMatchObject({ status: 200, json: { keyId: null } }),
        guarded: async () => {
          expect((await get('/guarded/item')).status).toBe(401);
          expect((await get('/guarded/item', read.secret)).status).toBe(200);
        },
        strict: async () => {
          expect((await get('/strict/item')).status).toBe(401);
          expect((await get('/strict/item', read.secret)).status).toBe(403);
          expect((await get('/strict/item', both.secret)).status).toBe(200);
        },
      };
      for (const name of order) await (expected[name] as () => Promise<void>)();
      // And each again, now that every route has been seen once.
      for (const name of order) await (expected[name] as () => Promise<void>)();
    },
  );

  it('@ApiKey() gives the public view: no secret, no hash', async () => {
    const get = await serve(platform, forRoot(), [controller([{ path: '/me', handle: (key) => ({ key }) }])]);
    const got = await get('/me', read.secret);
    expect(got.status).toBe(200);
    const key = got.json.key as PublicKey & Record<string, unknown>;
    // The manager's view adds its own derived fields (age, rotation) to the public view the request gets.
    const { ageDays: _, rotationDue: __, ...view } = JSON.parse(JSON.stringify(read.key));
    expect(key).toEqual(view);
    expect(Object.keys(key)).not.toContain('hash');
    expect(Object.keys(key)).not.toContain('secret');
    expect(got.text).not.toContain(read.secret);
  });

  it('forRootAsync builds the options from an injected provider of an imported module', async () => {
    const CONFIG = 'KEYGATE_CONFIG';
    class ConfigModule {}
    Module({ providers: [{ provide: CONFIG, useValue: { permissions: ['email:verify'] } }], exports: [CONFIG] })(
      ConfigModule,
    );
    const keygate = KeygateModule.forRootAsync({
      imports: [ConfigModule],
      inject: [CONFIG],
      useFactory: async (config: { permissions: string[] }) => ({ store, ...config }),
    });
    const get = await serve(platform, keygate, [controller([route('/verify')])]);
    expect((await get('/verify', read.secret)).status).toBe(403);
    expect(await get('/verify', verify.secret)).toMatchObject({ status: 200, json: { keyId: verify.key.id } });
  });

  it('globalGuard: false guards only UseGuards(ApiKeyGuard) controllers, and a route guarded twice is judged once', async () => {
    const limiter = new MemoryRateLimiter();
    const rateLimit = { limiter };
    const guarded = controller([route('/guarded')], [UseGuards(ApiKeyGuard)], 'g');
    const get = await serve(platform, forRoot({ rateLimit, globalGuard: false }), [
      guarded,
      controller([route('/free')]),
    ]);
    expect((await get('/free')).status).toBe(200);
    expect((await get('/g/guarded')).status).toBe(401);
    const first = await get('/g/guarded', limited.secret);
    expect(first.res.headers.get('ratelimit')).toBe('"default";r=4;t=60');

    const twice = controller([route('/twice')], [UseGuards(ApiKeyGuard)], 't');
    const both = await serve(platform, forRoot({ rateLimit: { limiter: new MemoryRateLimiter() } }), [twice]);
    expect((await both('/t/twice', limited.secret)).res.headers.get('ratelimit')).toBe('"default";r=4;t=60');
  });

  it('onDenied may write its own answer; one that throws still gets the standard denial', async () => {
    const custom = await serve(
      platform,
      forRoot({
        onDenied: (failure, _request, response) => {
          const reply = response as { status?: unknown; code?: unknown };
          if (platform === 'fastify')
            (reply as { code(s: number): { send(b: string): void } }).code(401).send(`no: ${failure.code}`);
          else (reply as { status(s: number): { send(b: string): void } }).status(401).send(`no: ${failure.code}`);
        },
      }),
      [controller([route('/x')])],
    );
    expect(await custom('/x')).toMatchObject({ status: 401, text: 'no: missing_api_key' });
    const throwing = await serve(
      platform,
      forRoot({
        onDenied: () => {
          throw new Error('hook failed');
        },
      }),
      [controller([route('/x')])],
    );
    expect(await throwing('/x')).toMatchObject({ status: 401, text: denial({ code: 'missing_api_key' }).body });
  });
});

describe('options refused when the module is made', () => {
  it.each([
    ['a store without findByHash', 'store', () => KeygateModule.forRoot({ store: {} as never })],
    ['a negative timeoutMs', 'timeoutMs', () => KeygateModule.forRoot({ store, timeoutMs: -1 })],
    ['a globalGuard as text', 'globalGuard', () => KeygateModule.forRoot({ store, globalGuard: 'yes' as never })],
    ['forRootAsync without useFactory', 'useFactory', () => KeygateModule.forRootAsync({} as never)],
    ['an empty permission in RequirePermissions', 'permissions', () => RequirePermissions('')],
  ] as const)('%s throws InvalidInputError naming %s', (_, field, build) => {
    expect(build).toThrow(InvalidInputError);
    expect(build).toThrow(expect.objectContaining({ code: 'invalid_input', field }));
  });

  it('forRootAsync refuses the factory’s bad options while the application starts', async () => {
    const keygate = KeygateModule.forRootAsync({ useFactory: () => ({ store, retryAfterMs: -5 }) });
    await expect(createNestApp('fastify', appModule([keygate], []))).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'retryAfterMs',
    });
  });
});
