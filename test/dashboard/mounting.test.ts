// The four documented mounting lines, each serving the whole sign-in, list and create flow: Hono
// (`app.mount`), a Workers `fetch` export (in workerd), Express 4/5 and Fastify 4/5 through the
// Node bridge. The bridge keeps status, headers, every Set-Cookie and streamed bodies, and follows
// the host's trust-proxy setting for the client address and the https scheme.
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import fastify4 from 'fastify4';
import { Hono } from 'hono';
import { type AttemptThrottle, KeyManager, MemoryKeyStore } from 'keygate';
import { createSignInLink, type Dashboard, dashboard, toFastifyPlugin, toNodeHandler } from 'keygate/dashboard';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleWorker, startWorker } from '../frameworks/workerd.js';
import { csrfOf, onceOf, SECRET } from './support.js';

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers) await close();
});

type Send = (url: string, init?: RequestInit) => Promise<Response>;

/** A cookie jar over a fetch function; redirects are not followed. */
function browser(send: Send) {
  const jar = new Map<string, string>();
  return async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (jar.size > 0) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await send(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const [name = '', value = ''] = pair.split('=');
      if (value) jar.set(name, value);
      else jar.delete(name);
    }
    return response;
  };
}

/** Signs in with a link, lists, creates a key: what every mount must carry. */
async function flow(send: Send, origin: string, basePath: string, link: string) {
  const go = browser(send);
  const signIn = await go(link);
  expect(signIn.status).toBe(303);
  expect(signIn.headers.get('location')).toBe(basePath === '/' ? '/' : `${basePath}/`);
  const list = await go(`${origin}${basePath === '/' ? '' : basePath}/`);
  expect(list.status).toBe(200);
  expect(list.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  expect(await list.text()).toContain('<h1>API keys</h1>');
  const form = await go(`${origin}${basePath === '/' ? '' : basePath}/keys/new`);
  const page = await form.text();
  const created = await go(`${origin}${basePath === '/' ? '' : basePath}/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams({
      _csrf: csrfOf(page),
      _once: onceOf(page) ?? '',
      name: 'mounted',
      mode: 'live',
      permissions: 'email:verify',
    }),
  });
  expect(created.status).toBe(201);
  expect(created.headers.get('cache-control')).toBe('no-store');
  expect(await created.text()).toMatch(/id="new-api-key"[^>]*value="mk_live_/);
}

function fresh(options: { basePath?: string; signInThrottle?: AttemptThrottle } = {}) {
  const keys = new KeyManager({ store: new MemoryKeyStore() });
  const ui = dashboard({
    manager: keys,
    secret: SECRET,
    basePath: '/dashboard',
    permissions: ['email:verify'],
    ...options,
  });
  return { keys, ui };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const EXPRESS = [
  ['Express 5', () => express()],
  ['Express 4', () => express4()],
] as const;
const FASTIFY = [
  ['Fastify 5', (o: object) => Fastify(o)],
  ['Fastify 4', (o: object) => fastify4(o)],
] as const;

async function expressServer(make: () => express.Express, ui: Dashboard, trust: unknown = false) {
  const app = make();
  app.set('trust proxy', trust);
  app.use('/dashboard', toNodeHandler(ui)); // the documented line
  app.get('/', (_req, res) => {
    res.send('host home');
  });
  return listen(http.createServer(app));
}

async function fastifyServer(make: (o: object) => unknown, ui: Dashboard, trustProxy: unknown = false) {
  const app = make({ trustProxy }) as ReturnType<typeof Fastify>;
  await app.register(toFastifyPlugin(ui), { prefix: '/dashboard' }); // the documented line
  app.get('/', async () => 'host home');
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  closers.push(() => app.close());
  return base;
}

describe('Hono: app.mount("/dashboard", ui.fetch)', () => {
  it('serves the flow', async () => {
    const { ui, keys } = fresh();
    const app = new Hono();
    app.mount('/dashboard', ui.fetch);
    app.get('/', (c) => c.text('host home'));
    const send: Send = (url, init) => Promise.resolve(app.fetch(new Request(url, init)));
    await flow(
      send,
      'http://host.test',
      '/dashboard',
      await ui.signInLink({ accountId: 'acct_1', baseUrl: 'http://host.test' }),
    );
    expect((await keys.list('acct_1')).map((k) => k.name)).toEqual(['mounted']);
    expect(await (await send('http://host.test/')).text()).toBe('host home');
  });
});

describe('a Workers fetch export: export default { fetch: ui.fetch }', () => {
  it('serves the flow in workerd, with a link made from the secret alone', async () => {
    const worker = startWorker(await bundleWorker(new URL('./worker/entry.ts', import.meta.url)));
    closers.push(() => worker.dispose());
    const origin = 'http://worker.test';
    const link = await createSignInLink({
      secret: 'worker-secret-of-at-least-32-bytes',
      accountId: 'acct_w',
      baseUrl: origin,
    });
    const send: Send = (url, init) => worker.dispatchFetch(url, init as never) as unknown as Promise<Response>;
    await flow(send, origin, '/', link);
  }, 60_000);
});

/**
 * Sends a bad link and then signs in through a host started by `start`, from a client that claims
 * `X-Forwarded-For: 203.0.113.50` and `X-Forwarded-Proto: https`. Returns the address the sign-in
 * throttle saw (once, exactly: for the bad link; a valid one never reaches it) and whether the session
 * cookie came back `Secure`.
 */
async function signInForwarded(start: (ui: Dashboard) => Promise<string>) {
  const seen: Array<string | null | undefined> = [];
  const throttle: AttemptThrottle = {
    check: (ip) => {
      seen.push(ip);
      return 0;
    },
    fail: () => {},
    reserve: (ip) => {
      seen.push(ip);
      return { waitMs: 0, settle: () => {} };
    },
  };
  const { ui } = fresh({ signInThrottle: throttle });
  const base = await start(ui);
  const forwarded = { 'x-forwarded-for': '203.0.113.50', 'x-forwarded-proto': 'https' };
  const link = new URL(await ui.signInLink({ accountId: 'acct_1', baseUrl: base }));
  const bad = await fetch(`${link.origin}${link.pathname}?token=not-a-link`, {
    redirect: 'manual',
    headers: forwarded,
  });
  expect(bad.status).toBe(401);
  const response = await fetch(link, { redirect: 'manual', headers: forwarded });
  expect(response.status).toBe(303);
  expect(seen).toHaveLength(1);
  return { ip: seen[0], secure: /; Secure/.test(response.headers.getSetCookie()[0] ?? '') };
}

describe.each(EXPRESS)('%s: app.use("/dashboard", toNodeHandler(ui))', (_, make) => {
  it('serves the flow and leaves the host routes alone', async () => {
    const { ui, keys } = fresh();
    const base = await expressServer(make as () => express.Express, ui);
    await flow(fetch, base, '/dashboard', await ui.signInLink({ accountId: 'acct_1', baseUrl: base }));
    expect((await keys.list('acct_1')).map((k) => k.name)).toEqual(['mounted']);
    expect(await (await fetch(`${base}/`)).text()).toBe('host home');
  });

  it('follows trust proxy: the forwarded address and https only from a trusted proxy', async () => {
    for (const trust of [false, 'loopback']) {
      const seen = await signInForwarded((ui) => expressServer(make as () => express.Express, ui, trust));
      expect(seen).toEqual(trust ? { ip: '203.0.113.50', secure: true } : { ip: '127.0.0.1', secure: false });
    }
  });
});

describe.each(FASTIFY)('%s: app.register(toFastifyPlugin(ui), { prefix: "/dashboard" })', (_, make) => {
  it('serves the flow and leaves the host routes alone', async () => {
    const { ui, keys } = fresh();
    const base = await fastifyServer(make, ui);
    await flow(fetch, base, '/dashboard', await ui.signInLink({ accountId: 'acct_1', baseUrl: base }));
    expect((await keys.list('acct_1')).map((k) => k.name)).toEqual(['mounted']);
    expect(await (await fetch(`${base}/`)).text()).toBe('host home');
  });

  it('follows trustProxy: the forwarded address and https only from a trusted proxy', async () => {
    for (const trustProxy of [false, '127.0.0.1']) {
      const seen = await signInForwarded((ui) => fastifyServer(make, ui, trustProxy));
      expect(seen).toEqual(trustProxy ? { ip: '203.0.113.50', secure: true } : { ip: '127.0.0.1', secure: false });
    }
  });
});

describe('the Node bridge', () => {
  it('streams the body both ways and keeps the status, headers and every Set-Cookie', async () => {
    const chunks: string[] = [];
    const handler = toNodeHandler({
      async fetch(request) {
        const reader = (request.body as ReadableStream<Uint8Array>).getReader();
        for (let r = await reader.read(); !r.done; r = await reader.read())
          chunks.push(new TextDecoder().decode(r.value));
        let i = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (i++ < 3) controller.enqueue(new TextEncoder().encode(`part${i};`));
            else controller.close();
          },
        });
        const headers = new Headers({ 'x-echo-method': request.method, 'x-echo-url': request.url });
        headers.append('set-cookie', 'a=1; Path=/');
        headers.append('set-cookie', 'b=2; Path=/; HttpOnly');
        return new Response(body, { status: 418, headers });
      },
    });
    const base = await listen(http.createServer(handler));
    const response = await fetch(`${base}/x?y=1`, { method: 'PUT', body: 'hello '.repeat(10_000) });
    expect(response.status).toBe(418);
    expect(response.headers.get('x-echo-method')).toBe('PUT');
    expect(response.headers.get('x-echo-url')).toBe(`${base}/x?y=1`);
    expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/; HttpOnly']);
    expect(await response.text()).toBe('part1;part2;part3;');
    expect(chunks.join('')).toBe('hello '.repeat(10_000));
  });

  it('rebuilds a form a host body parser already read', async () => {
    const { ui } = fresh();
    const app = express();
    app.use(express.urlencoded({ extended: false }));
    app.use('/dashboard', toNodeHandler(ui));
    const base = await listen(http.createServer(app));
    await flow(fetch, base, '/dashboard', await ui.signInLink({ accountId: 'acct_1', baseUrl: base }));
  });
});
