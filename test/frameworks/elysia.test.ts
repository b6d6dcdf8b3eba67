// keygate/elysia: the shared case table through `app.handle()` on Node and over a real socket on Bun
// (a child process serving test/frameworks/elysia/server.ts), then what is Elysia's own: the plugin's
// scope, credits around the handler, the opt-in client address and the onDenied hook.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Elysia, status } from 'elysia';
import { type HeldCredits, MemoryCreditLedger } from 'keygate';
import { createDenialResponder } from 'keygate/adapter-kit';
import { apiKeyAuth } from 'keygate/elysia';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { itAnswersEveryCase, observe, sendOverHttp } from './cases.js';
import { createElysiaApp } from './elysia-app.js';
import { type CaseFixture, seedCaseStore } from './fixtures.js';

const ROOT = join(import.meta.dirname, '../..');
const BUN = join(ROOT, 'test/matrix/runtimes/node_modules/.bin/bun');

const fixture = await seedCaseStore();
const { store, secrets, ids } = fixture;
const at = (path: string, headers: Record<string, string> = {}) => new Request(`http://localhost${path}`, { headers });

describe('Elysia on Node, app.handle()', () => {
  const app = createElysiaApp(store);
  itAnswersEveryCase(
    () => fixture,
    () =>
      async ({ path, headers }) =>
        observe(await app.handle(at(path, headers))),
  );
});

/** Bun, installed with the runtime matrix: required in CI, skipped with a note elsewhere. */
function bunAvailable(): boolean {
  if (existsSync(BUN)) return true;
  if (process.env.KEYGATE_REQUIRE_SERVICES === '1') {
    throw new Error(`Bun not found at ${BUN}: run \`npm ci --prefix test/matrix/runtimes\``);
  }
  console.log(`Bun not found at ${BUN}: skipping Elysia on Bun; run \`npm ci --prefix test/matrix/runtimes\``);
  return false;
}

interface Served extends Pick<CaseFixture, 'secrets' | 'ids'> {
  base: string;
  loopback: { secret: string; id: string };
}

/** Starts the Bun server and reads its first line: the base URL and the secrets it seeded. */
function startOnBun(): { child: ChildProcess; ready: Promise<Served> } {
  // `source`: keygate from its TypeScript sources, as every other test resolves it.
  const child = spawn(BUN, ['--conditions=source', 'test/frameworks/elysia/server.ts'], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const ready = new Promise<Served>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the Bun server exited (${code}) before it answered`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) => resolve(JSON.parse(line)));
  });
  return { child, ready };
}

describe.runIf(bunAvailable())('Elysia on Bun, real socket', async () => {
  const { child, ready } = startOnBun();
  // Closing stdin stops the server; the kill is for a child that did not listen.
  afterAll(async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin?.end();
    const timer = setTimeout(() => child.kill(), 5000);
    await exited;
    clearTimeout(timer);
  });
  const served = await ready;

  describe('the shared case table', () => {
    itAnswersEveryCase(
      () => ({ ...fixture, secrets: served.secrets, ids: served.ids }),
      () => sendOverHttp(served.base),
    );
  });

  describe('the client address comes only from clientIp', () => {
    const send = async (path: string, headers: Record<string, string>) => {
      const res = await fetch(`${served.base}${path}`, { headers });
      return { status: res.status, body: await res.json() };
    };

    it("with clientIp: socketAddress, a key allowed only from 127.0.0.1 passes: Bun's server.requestIP", async () => {
      expect(await send('/socket', { 'x-api-key': served.loopback.secret })).toEqual({
        status: 200,
        body: { keyId: served.loopback.id },
      });
    });

    it('with socketAddress, a forged X-Forwarded-For inside the allow list is ignored', async () => {
      const got = await send('/socket', { 'x-api-key': served.secrets.allowListed, 'x-forwarded-for': '203.0.113.7' });
      expect({ status: got.status, code: got.body.code }).toEqual({ status: 403, code: 'ip_not_allowed' });
    });

    it.each([
      ['the loopback key', 'loopback', undefined],
      ['a forged X-Forwarded-For inside the allow list', 'allowListed', '203.0.113.7'],
    ])('without clientIp the address is unknown: %s gets 403', async (_, name, forwarded) => {
      const secret = name === 'loopback' ? served.loopback.secret : served.secrets.allowListed;
      const headers: Record<string, string> = { 'x-api-key': secret };
      if (forwarded) headers['x-forwarded-for'] = forwarded;
      const got = await send('/no-address', headers);
      expect({ status: got.status, code: got.body.code }).toEqual({ status: 403, code: 'ip_not_allowed' });
    });
  });
});

describe('the plugin guards the routes after .use() on its instance', () => {
  const inner = new Elysia()
    .get('/inner/before', () => 'open')
    .use(apiKeyAuth({ store }))
    .get('/inner/after', ({ apiKey }) => ({ keyId: apiKey.id }));
  const app = new Elysia()
    .get('/before', () => 'open')
    .use(inner)
    .get('/sibling', () => 'open');

  it.each([
    ['a route registered before .use()', '/inner/before', 200],
    ['a route registered after .use()', '/inner/after', 401],
    ["the parent's route registered before the instance", '/before', 200],
    ["the parent's route registered after the instance: scoped, the hooks stop at the parent", '/sibling', 200],
  ])('%s without a key answers %i', async (_, path, want) => {
    expect((await app.handle(at(path))).status).toBe(want);
  });

  it('hands the guarded handler the public view: no hash, no secret', async () => {
    const plain = new Elysia().use(apiKeyAuth({ store })).get('/key', ({ apiKey }) => apiKey);
    const res = await plain.handle(at('/key', { 'x-api-key': secrets.open }));
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ id: ids.open, name: 'open', mode: 'test' });
    expect(Object.keys(JSON.parse(text))).not.toContain('hash');
    expect(text).not.toContain(secrets.open);
  });
});

describe('credits: held before the handler, closed after it', () => {
  const ACCOUNT = 'acct_1';
  const COST = 2;

  async function billedApp() {
    const ledger = new MemoryCreditLedger();
    await ledger.topUp(ACCOUNT, 10);
    const body = (credits: HeldCredits | undefined) => ({ credits: credits ?? null });
    const app = new Elysia()
      .onError(() => new Response('failed', { status: 500 })) // Elysia's own handler would log the error
      .use(apiKeyAuth({ store, credits: { ledger, cost: COST } }))
      .get('/ok', ({ apiKeyCredits }) => body(apiKeyCredits))
      .get('/missing', ({ apiKeyCredits }) => status(404, body(apiKeyCredits)))
      .get('/set-status', ({ apiKeyCredits, set }) => {
        set.status = 'Service Unavailable';
        return body(apiKeyCredits);
      })
      .get('/broken', ({ apiKeyCredits }) => Response.json(body(apiKeyCredits), { status: 503 }))
      .get('/throw', () => {
        throw new Error('handler failed');
      });
    const send = async (path: string, key = secrets.limited) => {
      const res = await app.handle(at(path, { 'x-api-key': key }));
      const text = await res.text();
      return { status: res.status, credits: text.startsWith('{') ? JSON.parse(text).credits : null };
    };
    const ledgerState = async () => ({
      balance: await ledger.balance(ACCOUNT),
      kinds: (await ledger.entries(ACCOUNT)).map((entry) => entry.kind),
    });
    return { send, ledgerState };
  }

  it('hands the handler the hold as apiKeyCredits and settles it on a 2xx, before the response', async () => {
    const { send, ledgerState } = await billedApp();
    expect(await send('/ok')).toEqual({ status: 200, credits: { holdId: expect.any(String), cost: COST, balance: 8 } });
    expect(await ledgerState()).toEqual({ balance: 8, kinds: ['charge', 'top_up'] });
  });

  it('settles on a 4xx from status(): the work was done', async () => {
    const { send, ledgerState } = await billedApp();
    expect((await send('/missing')).status).toBe(404);
    expect(await ledgerState()).toEqual({ balance: 8, kinds: ['charge', 'top_up'] });
  });

  it.each([
    ['a 5xx Response', '/broken', 503],
    ['set.status by name', '/set-status', 503],
    ['a thrown error', '/throw', 500],
  ])('releases on %s: the balance restored, no charge', async (_, path, want) => {
    const { send, ledgerState } = await billedApp();
    expect((await send(path)).status).toBe(want);
    // An app error hook that answers first leaves the release to the after-response hook.
    await vi.waitFor(async () => expect(await ledgerState()).toEqual({ balance: 10, kinds: ['top_up'] }));
  });

  it('holds nothing for a test key', async () => {
    const { send, ledgerState } = await billedApp();
    expect(await send('/ok', secrets.open)).toEqual({ status: 200, credits: null });
    expect(await ledgerState()).toEqual({ balance: 10, kinds: ['top_up'] });
  });
});

describe('onDenied', () => {
  const standard = createDenialResponder()({ code: 'missing_api_key' });
  const appWith = (onDenied: (...args: never[]) => unknown) =>
    new Elysia().use(apiKeyAuth({ store, onDenied: onDenied as never })).get('/x', () => {
      throw new Error('the handler must not run');
    });

  it("sends the hook's Response", async () => {
    const app = appWith((failure: { code: string }) => Response.json({ error: failure.code }, { status: 401 }));
    const res = await app.handle(at('/x'));
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 401, body: { error: 'missing_api_key' } });
  });

  it.each([
    ['throws', () => Promise.reject(new Error('hook failed'))],
    ['returns no Response', () => ({ allowed: true })],
  ])('sends the standard denial when the hook %s', async (_, hook) => {
    const res = await appWith(hook).handle(at('/x'));
    expect({ status: res.status, type: res.headers.get('content-type'), body: await res.text() }).toEqual({
      status: standard.status,
      type: 'application/problem+json',
      body: standard.body,
    });
  });
});
