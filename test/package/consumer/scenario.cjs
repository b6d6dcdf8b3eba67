// Runs inside a fresh project that installed the packed keygate tarball. `load(name)` is `import()`
// (esm.mjs) or `require()` (cjs.cjs), so the same requests go through each module format. Prints
// one JSON object: per entry point, the file it resolved to and what each request answered.
const { once } = require('node:events');

const SECRET_SHAPE = /^mk_test_[0-9A-Za-z]{38}$/;

/** A key store with one test key, made through the installed KeyManager. */
async function seeded(core, store = new core.MemoryKeyStore()) {
  const keys = new core.KeyManager({ store });
  const { secret, key } = await keys.create({
    accountId: 'acct_1',
    name: 'tarball',
    mode: 'test',
    permissions: ['email:verify'],
  });
  return { store, keys, secret, key };
}

/**
 * What an entry point threw when given bad input: its code and field, and whether it is an instance
 * of the root's classes (one class family across every entry point and module format).
 */
async function thrownBy(core, provoke) {
  try {
    await provoke();
  } catch (error) {
    return {
      code: error?.code,
      field: error?.field,
      keygateError: error instanceof core.KeygateError,
      invalidInput: error instanceof core.InvalidInputError,
    };
  }
  return { code: null };
}

/** Status of a request without a key, then with the key: what every adapter must answer. */
async function statuses(send, secret) {
  return [await send({}), await send({ 'x-api-key': secret })];
}

module.exports = async function run(load, resolvePath) {
  const out = {};
  const core = await load('keygate');
  const entry = async (name, exercise) => {
    try {
      const mod = await load(name);
      out[name] = { file: resolvePath(name), exports: Object.keys(mod).sort(), ...(await exercise(mod)) };
    } catch (error) {
      out[name] = { error: String(error?.stack ?? error) };
    }
  };

  await entry('keygate', async () => {
    const { store, secret } = await seeded(core);
    const ok = await core.authenticate({ headers: { 'x-api-key': secret }, ip: '203.0.113.7' }, store);
    const missing = await core.authenticate({ headers: {}, ip: undefined }, store);
    return {
      secretShape: SECRET_SHAPE.test(secret),
      answers: [missing.status, ok.status],
      mode: ok.key?.mode,
      thrown: await thrownBy(core, () => new core.KeyManager({ store: {} })),
    };
  });

  await entry('keygate/express', async ({ apiKeyAuth }) => {
    const thrown = await thrownBy(core, () => apiKeyAuth({}));
    const express = await load('express');
    const { store, secret } = await seeded(core);
    const app = (express.default ?? express)();
    app.get('/v1/check', apiKeyAuth({ store, permissions: ['email:verify'] }), (req, res) => {
      res.json({ name: req.apiKey.name });
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const base = `http://127.0.0.1:${server.address().port}`;
      return {
        answers: await statuses(async (headers) => (await fetch(`${base}/v1/check`, { headers })).status, secret),
        thrown,
      };
    } finally {
      server.close();
    }
  });

  await entry('keygate/fastify', async (plugin) => {
    const fastify = await load('fastify');
    const { store, secret } = await seeded(core);
    const app = (fastify.default ?? fastify)();
    await app.register(plugin.default, { store });
    app.get('/v1/check', async (request) => ({ name: request.apiKey.name }));
    await app.ready();
    try {
      const send = async (headers) => (await app.inject({ url: '/v1/check', headers })).statusCode;
      const thrown = await thrownBy(core, async () => {
        const other = (fastify.default ?? fastify)();
        await other.register(plugin.default, { store });
        other.get('/v1/other', { config: { apiKey: 'yes' } }, async () => ({}));
        await other.ready();
      });
      return { answers: await statuses(send, secret), defaultIsPlugin: plugin.default === plugin.apiKeyAuth, thrown };
    } finally {
      await app.close();
    }
  });

  // A Nest application (platform-express) whose module is keygate's, decorators applied as functions.
  await entry('keygate/nestjs', async ({ KeygateModule, ApiKey }) => {
    await load('reflect-metadata');
    const { Controller, Get, Module } = await load('@nestjs/common');
    const { NestFactory } = await load('@nestjs/core');
    const { store, secret } = await seeded(core);
    class Check {
      check(key) {
        return { name: key.name };
      }
    }
    Controller()(Check);
    Get('/v1/check')(Check.prototype, 'check', Object.getOwnPropertyDescriptor(Check.prototype, 'check'));
    ApiKey()(Check.prototype, 'check', 0);
    class App {}
    Module({ imports: [KeygateModule.forRoot({ store, permissions: ['email:verify'] })], controllers: [Check] })(App);
    const app = await NestFactory.create(App, { logger: false, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    try {
      const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
      return {
        answers: await statuses(async (headers) => (await fetch(`${base}/v1/check`, { headers })).status, secret),
        thrown: await thrownBy(core, () => KeygateModule.forRoot({})),
      };
    } finally {
      await app.close();
    }
  });

  await entry('keygate/fetch', async ({ withApiKeyAuth }) => {
    const { store, secret } = await seeded(core);
    const handler = withApiKeyAuth((_request, key) => Response.json({ name: key.name }), { store });
    const send = async (headers) => (await handler(new Request('http://api.test/v1/check', { headers }))).status;
    return {
      answers: await statuses(send, secret),
      thrown: await thrownBy(core, () => withApiKeyAuth(null, { store })),
    };
  });

  await entry('keygate/hono', async ({ apiKeyAuth }) => {
    const { Hono } = await load('hono');
    const { store, secret } = await seeded(core);
    const app = new Hono();
    app.get('/v1/check', apiKeyAuth({ store }), (c) => c.json({ name: c.get('apiKey').name }));
    return {
      answers: await statuses(async (headers) => (await app.request('/v1/check', { headers })).status, secret),
      thrown: await thrownBy(core, () => apiKeyAuth({ store: {} })),
    };
  });

  await entry('keygate/koa', async ({ apiKeyAuth }) => {
    const thrown = await thrownBy(core, () => apiKeyAuth({}));
    const koa = await load('koa');
    const { store, secret } = await seeded(core);
    const app = new (koa.default ?? koa)();
    app.use(apiKeyAuth({ store, permissions: ['email:verify'] }));
    app.use((ctx) => {
      ctx.body = { name: ctx.state.apiKey.name };
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const base = `http://127.0.0.1:${server.address().port}`;
      return {
        answers: await statuses(async (headers) => (await fetch(`${base}/v1/check`, { headers })).status, secret),
        thrown,
      };
    } finally {
      server.close();
    }
  });

  // Elysia on Node answers through `app.handle()` (its own server needs Bun).
  await entry('keygate/elysia', async ({ apiKeyAuth }) => {
    const { Elysia } = await load('elysia');
    const { store, secret } = await seeded(core);
    const app = new Elysia().use(apiKeyAuth({ store })).get('/v1/check', ({ apiKey }) => ({ name: apiKey.name }));
    const send = async (headers) => (await app.handle(new Request('http://localhost/v1/check', { headers }))).status;
    return {
      answers: await statuses(send, secret),
      thrown: await thrownBy(core, () => apiKeyAuth({ store: {} })),
    };
  });

  await entry('keygate/next', async ({ apiKeyMiddleware, apiKeyFromHeaders }) => {
    const { NextRequest } = await load('next/server.js');
    const { store, secret, key } = await seeded(core);
    const signing = 'a consumer secret of at least 32 bytes';
    const gate = apiKeyMiddleware({ store, secret: signing });
    const send = (headers) => gate(new NextRequest('http://app.test/api/v1/check', { headers }));
    const allowed = await send({ 'x-api-key': secret });
    // What Next hands the route: the request headers the middleware set on its NextResponse.next().
    const forwarded = { get: (name) => allowed.headers.get(`x-middleware-request-${name}`) };
    const view = await apiKeyFromHeaders(forwarded, { secret: signing });
    return {
      answers: [(await send({})).status, allowed.status],
      verified: view?.id === key.id,
      thrown: await thrownBy(core, () => apiKeyMiddleware({ store })),
    };
  });

  await entry('keygate/postgres', async ({ PostgresKeyStore }) => {
    const { PGlite } = await load('@electric-sql/pglite');
    const client = new PGlite();
    try {
      const store = new PostgresKeyStore({ client });
      await store.migrate();
      const { secret, keys, key } = await seeded(core, store);
      const before = await core.authenticate({ headers: { 'x-api-key': secret } }, store);
      await keys.revoke(key.id);
      const after = await core.authenticate({ headers: { 'x-api-key': secret } }, store);
      await store.close?.();
      const thrown = await thrownBy(core, () => new PostgresKeyStore({ client: {} }));
      return { answers: [before.status, after.code], thrown };
    } finally {
      await client.close();
    }
  });

  // A SQLite file in a temporary folder: node:sqlite where Node has it, else the repository's
  // better-sqlite3 (KEYGATE_TARBALL_BETTER_SQLITE3: its folder), so the test compiles no native module again.
  await entry('keygate/sqlite', async ({ SqliteKeyStore }) => {
    const { mkdtempSync, rmSync } = require('node:fs');
    const { join } = require('node:path');
    const folder = mkdtempSync(join(require('node:os').tmpdir(), 'keygate-tarball-sqlite-'));
    let database;
    try {
      const { DatabaseSync } = await load('node:sqlite');
      database = new DatabaseSync(join(folder, 'keygate.db'));
    } catch {
      const loaded = await load(process.env.KEYGATE_TARBALL_BETTER_SQLITE3 ?? 'better-sqlite3');
      const Database = loaded.default ?? loaded;
      database = new Database(join(folder, 'keygate.db'));
    }
    try {
      const store = new SqliteKeyStore({ database });
      await store.migrate();
      const { secret, keys, key } = await seeded(core, store);
      const before = await core.authenticate({ headers: { 'x-api-key': secret } }, store);
      await keys.revoke(key.id);
      const after = await core.authenticate({ headers: { 'x-api-key': secret } }, store);
      store.close();
      const thrown = await thrownBy(core, () => new SqliteKeyStore({ database: {} }));
      return { answers: [before.status, after.code], thrown };
    } finally {
      database.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  await entry('keygate/drizzle', async ({ keygatePgTables, keygatePgMigrationSql, drizzlePgStores }) => {
    const { PGlite } = await load('@electric-sql/pglite');
    const { drizzle } = await load('drizzle-orm/pglite');
    const { eq } = await load('drizzle-orm');
    const { PostgresKeyStore } = await load('keygate/postgres');
    const client = new PGlite();
    try {
      // The tables as keygate's own migrate() makes them: the same catalog drizzle-kit makes from keygatePgTables.
      await new PostgresKeyStore({ client, schema: 'keygate' }).migrate();
      const db = drizzle(client);
      const { keys } = drizzlePgStores(db, { schema: 'keygate' });
      const { secret, keys: manager, key } = await seeded(core, keys);
      const before = await core.authenticate({ headers: { 'x-api-key': secret } }, keys);
      await manager.revoke(key.id);
      const after = await core.authenticate({ headers: { 'x-api-key': secret } }, keys);
      const { keygateKeys } = keygatePgTables({ schema: 'keygate' });
      const read = await db.select({ status: keygateKeys.status }).from(keygateKeys).where(eq(keygateKeys.id, key.id));
      keys.close();
      return {
        answers: [before.status, after.code],
        read: read.map((row) => row.status),
        custom: keygatePgMigrationSql({ schema: 'keygate' }).includes('CREATE TRIGGER keygate_audit_no_truncate'),
        thrown: await thrownBy(core, () => drizzlePgStores({})),
      };
    } finally {
      await client.close();
    }
  });

  // A D1 database and a KV namespace in Miniflare (workerd, in memory), loaded from the repository
  // (KEYGATE_TARBALL_MINIFLARE: its main file) so that the consumer project installs no workerd.
  await entry('keygate/cloudflare', async ({ D1KeyStore }) => {
    const loaded = await load(process.env.KEYGATE_TARBALL_MINIFLARE ?? 'miniflare');
    const { Miniflare } = loaded.default ?? loaded;
    const mf = new Miniflare({
      modules: true,
      script: 'export default {}',
      d1Databases: ['DB'],
      kvNamespaces: ['KEYS'],
    });
    try {
      const db = await mf.getD1Database('DB');
      const store = new D1KeyStore({ db, cache: await mf.getKVNamespace('KEYS') });
      await store.migrate();
      const { secret, keys, key } = await seeded(core, store);
      const before = await core.authenticate({ headers: { 'x-api-key': secret } }, store);
      await keys.revoke(key.id);
      const after = await core.authenticate({ headers: { 'x-api-key': secret } }, store);
      const thrown = await thrownBy(core, () => new D1KeyStore({ db, maxStaleMs: 0 }));
      return { answers: [before.status, after.code], thrown };
    } finally {
      await mf.dispose();
    }
  });

  await entry('keygate/redis', async ({ RedisKeyStore }) => {
    const thrown = await thrownBy(core, () => new RedisKeyStore({ client: {} }));
    if (process.env.KEYGATE_TARBALL_REDIS !== '1') return { skipped: 'no Redis at 127.0.0.1:6379', thrown };
    const { createClient } = await load('redis');
    const client = createClient({ url: 'redis://127.0.0.1:6379', socket: { reconnectStrategy: false } });
    await client.connect();
    const prefix = `keygate-tarball-${process.pid}-${Date.now()}:`;
    try {
      const store = new RedisKeyStore({ client, prefix });
      const { secret } = await seeded(core, store);
      const ok = await core.authenticate({ headers: { 'x-api-key': secret } }, store);
      await store.close?.();
      return { answers: [ok.status], thrown };
    } finally {
      for (const key of await client.keys(`${prefix}*`)) await client.del(key);
      await client.close();
    }
  });

  await entry('keygate/mysql', async ({ MysqlKeyStore }) => {
    const thrown = await thrownBy(core, () => new MysqlKeyStore({ client: {} }));
    if (process.env.KEYGATE_TARBALL_MYSQL !== '1') return { skipped: 'no MariaDB at 127.0.0.1:3306', thrown };
    const mysql = await load('mysql2/promise');
    const { createConnection, createPool } = mysql.default ?? mysql;
    const database = `keygate_test_tarball_${process.pid}_${Date.now()}`;
    const admin = await createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
    await admin.query(`CREATE DATABASE \`${database}\``);
    const pool = createPool({ host: '127.0.0.1', port: 3306, user: 'root', database });
    try {
      const store = new MysqlKeyStore({ client: pool });
      await store.migrate();
      const { secret, keys, key } = await seeded(core, store);
      const before = await core.authenticate({ headers: { 'x-api-key': secret } }, store);
      await keys.revoke(key.id);
      const after = await core.authenticate({ headers: { 'x-api-key': secret } }, store);
      store.close();
      return { answers: [before.status, after.code], thrown };
    } finally {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.end();
    }
  });

  await entry('keygate/adapter-kit', async (kit) => {
    const { store, secret } = await seeded(core);
    const { auth, respond } = kit.resolveAdapterOptions({ store, retryAfterMs: 2500 });
    const send = async (headers) => (await kit.authenticateEager({ headers }, store, auth)).status;
    let refusal;
    try {
      kit.resolveAdapterOptions({});
    } catch (error) {
      refusal = error;
    }
    return {
      answers: await statuses(send, secret),
      retryAfter: respond({ code: 'key_store_unavailable' }).headers['retry-after'],
      // One copy of the core for every entry point: the kit throws the class the root exports.
      sharedErrorClass: refusal instanceof core.InvalidInputError && refusal.field === 'store',
      thrown: await thrownBy(core, () => kit.createDenialResponder({ retryAfterMs: -1 })),
    };
  });

  await entry('keygate/dashboard', async ({ dashboard }) => {
    const { keys } = await seeded(core);
    const ui = dashboard({ manager: keys, secret: 'tarball-secret-of-at-least-32-bytes', basePath: '/dashboard' });
    const signIn = await ui.fetch(new Request(await ui.signInLink({ accountId: 'acct_1', baseUrl: 'http://ui.test' })));
    const cookie = signIn.headers.getSetCookie()[0].split(';')[0];
    const list = await ui.fetch(new Request('http://ui.test/dashboard/', { headers: { cookie } }));
    const html = await list.text();
    return {
      answers: [signIn.status, list.status],
      listsKey: html.includes('>tarball</a>'),
      thrown: await thrownBy(core, () => dashboard({ manager: {}, secret: 'tarball-secret-of-at-least-32-bytes' })),
      signInLinkThrown: await thrownBy(core, () =>
        ui.signInLink({ accountId: 'acct\u202e1', baseUrl: 'http://ui.test' }),
      ),
    };
  });

  // An unsigned report is refused before any lookup; a manager that is not the root's KeyManager is refused.
  await entry('keygate/leaks', async ({ githubSecretScanning }) => {
    const { keys } = await seeded(core);
    const leaks = githubSecretScanning({ manager: keys, fetch: async () => new Response('{"public_keys":[]}') });
    const unsigned = await leaks(new Request('http://service.test/', { method: 'POST', body: '[]' }));
    return {
      answers: [unsigned.status],
      thrown: await thrownBy(core, () => githubSecretScanning({ manager: {} })),
    };
  });

  await entry('keygate/testing', async ({ describeKeyStoreContract }) => ({
    contract: typeof describeKeyStoreContract,
  }));

  // A webhook signed and verified through the installed entry; a tampered body throws the root's class family.
  await entry('keygate/webhooks', async ({ signWebhook, verifyWebhook }) => {
    const secret = `whsec_${Buffer.from('tarball webhook secret, 32 bytes').toString('base64')}`;
    const body = JSON.stringify({
      id: 'evt_1',
      type: 'key.revoked',
      accountId: 'acct_1',
      at: new Date().toISOString(),
      data: {},
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(timestamp) };
    headers['webhook-signature'] = await signWebhook({ secret, id: 'evt_1', timestamp, body });
    const event = await verifyWebhook({ secret, headers, body });
    return {
      verified: event.type,
      thrown: await thrownBy(core, () => verifyWebhook({ secret, headers, body: body.replace('acct_1', 'acct_2') })),
    };
  });

  // A store built on the kit throws the root's error classes (one class family across entry points).
  await entry('keygate/store-kit', async ({ applyPatch, validConsumeArgs }) => {
    const { store, keys, secret, key } = await seeded(core);
    await keys.revoke(key.id);
    const revoked = await store.findByHash(await core.hashKey(secret));
    try {
      applyPatch(revoked, { name: 'renamed', updatedAt: new Date().toISOString() });
      return { thrown: null };
    } catch (error) {
      return {
        thrown: error.code,
        rootClass: error instanceof core.KeygateError,
        invalidArguments: await thrownBy(core, () => validConsumeArgs('', { limit: 1, windowMs: 1 }, 1)),
      };
    }
  });

  return out;
};
