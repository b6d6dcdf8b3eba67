// One benchmark server per process: `node bench/server.mjs <variant>` with the key in BENCH_KEY.
// Prints `{"port":N}` once listening on 127.0.0.1. Every variant answers GET ROUTE with BODY, and
// POST POST_ROUTE (a JSON body, parsed after the key is checked) with the address it was sent.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import express from 'express';
import { IpFilter } from 'express-ipfilter';
import fastify from 'fastify';
import { Hono } from 'hono';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth } from 'keygate/fastify';
import { apiKeyAuth as honoAuth } from 'keygate/hono';
import passport from 'passport';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import { countStatements } from './count-statements.mjs';
import { BODY, CLIENT_IP, keyStoreWith, PERMISSION, POST_ROUTE, ROUTE } from './fixture.mjs';

const payload = JSON.parse(BODY);
const auth = async () => ({ store: await keyStoreWith(process.env.BENCH_KEY), permissions: [PERMISSION] });

/** What the server undoes as it stops (SIGTERM), in order. */
const cleanups = [];

// Per-key rate limits shared through Redis: one EVALSHA per request. The key takes the default, whose
// limit never runs out during the benchmark. Its commands are counted, and read at a route keygate skips.
// `clientOptions` go to node-redis's createClient (the -notimeout variant turns its per-command timer off).
async function redisLimits(clientOptions = {}) {
  const { createClient } = await import('redis');
  const { RedisRateLimiter } = await import('keygate/redis');
  const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const client = await createClient({ url, ...clientOptions }).connect();
  const counter = { commands: 0 };
  const counted = {
    sendCommand: (args) => {
      counter.commands++;
      return client.sendCommand(args);
    },
  };
  const prefix = `keygate:bench:${process.pid}:`;
  const limiter = new RedisRateLimiter({ client: counted, prefix });
  // The counters would outlive the run by an hour (their window): the server removes them as it stops.
  cleanups.push(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(keys);
    await client.quit();
  });
  return { counter, rateLimit: { limiter, default: { limit: 1e12, windowMs: 3_600_000 } } };
}

async function fastifyWithLimits(clientOptions, leased = false) {
  const app = fastify();
  const { counter, rateLimit } = await redisLimits(clientOptions);
  if (leased) {
    // Slices of the key's window (LeasedRateLimiter): one top-up per about 150 requests (maxSlice 300, topped up at half) instead of one EVALSHA each.
    const { LeasedRateLimiter } = await import('keygate');
    const limiter = new LeasedRateLimiter({ limiter: rateLimit.limiter });
    cleanups.unshift(() => limiter.close());
    rateLimit.limiter = limiter;
  }
  await app.register(fastifyAuth, { ...(await auth()), rateLimit });
  app.get('/bench/redis-commands', { config: { apiKey: false } }, async () => ({ commands: counter.commands }));
  return app;
}

// Prepaid credits on a shared ledger: the key's account is funded far beyond the run, each request
// holds one credit before its handler and settles it after. The ledger's round trips (Redis commands,
// PostgreSQL statements with BEGIN and COMMIT) are counted and read at a route keygate skips.
async function redisLedger(counter) {
  const { createClient } = await import('redis');
  const { RedisCreditLedger } = await import('keygate/redis');
  const client = await createClient({ url: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379' }).connect();
  const counted = {
    sendCommand: (args) => {
      counter.commands++;
      return client.sendCommand(args);
    },
  };
  const prefix = `keygate:bench:credits:${process.pid}:`;
  cleanups.push(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(keys);
    await client.quit();
  });
  // A deadline as long as the authentication timeout (so no second timer guards it): a loaded machine
  // must slow the run, not fail it with 503s.
  return new RedisCreditLedger({ client: counted, prefix, timeoutMs: 2_000 });
}

async function postgresLedger(counter) {
  const pg = (await import('pg')).default;
  const { PostgresCreditLedger } = await import('keygate/postgres');
  const pool = new pg.Pool({ connectionString: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test' });
  // Every statement goes through a pooled connection's `query`: counted there, once per statement.
  countStatements(pool, counter, 'commands');
  const schema = `keygate_bench_http_${process.pid}`;
  const ledger = new PostgresCreditLedger({ client: pool, schema, timeoutMs: 2_000 });
  await ledger.migrate();
  cleanups.push(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pool.end();
  });
  return ledger;
}

async function fastifyWithCredits(open, leased = false) {
  const app = fastify();
  const counter = { commands: 0 };
  let ledger = await open(counter);
  await ledger.topUp('acct_bench', 1e15);
  if (leased) {
    // Slices of the account's balance (LeasedCreditLedger): one hold and one settle per slice of requests.
    const { LeasedCreditLedger } = await import('keygate');
    ledger = new LeasedCreditLedger({ ledger });
    const leasedLedger = ledger;
    cleanups.unshift(() => leasedLedger.close());
  }
  await app.register(fastifyAuth, { ...(await auth()), credits: { ledger } });
  app.get('/bench/redis-commands', { config: { apiKey: false } }, async () => ({ commands: counter.commands }));
  return app;
}

async function listen(server) {
  await once(server, 'listening');
  return server.address().port;
}

// The stack an Express user assembles today: express-ipfilter for the allow list, then
// passport-headerapikey with a verify callback over SHA-256 digests, then a permission check.
function peerStack(app) {
  const secret = process.env.BENCH_KEY;
  const byDigest = new Map([[createHash('sha256').update(secret).digest('hex'), { permissions: [PERMISSION] }]]);
  passport.use(
    new HeaderAPIKeyStrategy({ header: 'x-api-key', prefix: '' }, false, (key, done) => {
      done(null, byDigest.get(createHash('sha256').update(key).digest('hex')) ?? false);
    }),
  );
  app.use(IpFilter([CLIENT_IP], { mode: 'allow', log: false }));
  app.use(passport.initialize());
  return [
    passport.authenticate('headerapikey', { session: false }),
    (req, res, next) => (req.user.permissions.includes(PERMISSION) ? next() : res.status(403).end()),
  ];
}

const variants = {
  'express-bare': async () => express(),
  'express-keygate': async () => [express(), expressAuth(await auth())],
  'express-peer': async () => {
    const app = express();
    return [app, ...peerStack(app)];
  },
  // A middleware that does nothing: what the framework charges for any asynchronous middleware.
  'express-noop': async () => [express(), (_req, _res, next) => Promise.resolve().then(() => next())],
  'fastify-bare': async () => fastify(),
  'fastify-noop': async () => {
    const app = fastify();
    app.addHook('onRequest', async () => {});
    return app;
  },
  'fastify-keygate': async () => {
    const app = fastify();
    await app.register(fastifyAuth, await auth());
    return app;
  },
  'fastify-keygate-limits': () => fastifyWithLimits(),
  // node-redis 6 arms an AbortSignal.timeout per command for its own 5 s command timeout; the limiter
  // keeps its own deadline, so a client made for it can turn that timer off.
  'fastify-keygate-limits-notimeout': () => fastifyWithLimits({ commandOptions: { timeout: 0 } }),
  // The same limits through leased budgets (LeasedRateLimiter over the Redis limiter), node-redis's defaults.
  'fastify-keygate-limits-leased': () => fastifyWithLimits({}, true),
  // Credits held and settled on each request, on Redis and on PostgreSQL, directly and through leased slices.
  'fastify-keygate-credits-redis': () => fastifyWithCredits(redisLedger),
  'fastify-keygate-credits-redis-leased': () => fastifyWithCredits(redisLedger, true),
  'fastify-keygate-credits-pg': () => fastifyWithCredits(postgresLedger),
  'fastify-keygate-credits-pg-leased': () => fastifyWithCredits(postgresLedger, true),
  // The floors of the two features: the same limits and credits in this process's memory, no store.
  'fastify-keygate-limits-memory': async () => {
    const { MemoryRateLimiter } = await import('keygate');
    const app = fastify();
    const rateLimit = { limiter: new MemoryRateLimiter(), default: { limit: 1e12, windowMs: 3_600_000 } };
    await app.register(fastifyAuth, { ...(await auth()), rateLimit });
    return app;
  },
  'fastify-keygate-credits-memory': async () => {
    const { MemoryCreditLedger } = await import('keygate');
    const ledger = new MemoryCreditLedger();
    await ledger.topUp('acct_bench', 1e15);
    const app = fastify();
    await app.register(fastifyAuth, { ...(await auth()), credits: { ledger } });
    return app;
  },
  'hono-bare': async () => new Hono(),
  'hono-noop': async () => {
    const app = new Hono();
    app.use(async (_c, next) => {
      await next();
    });
    return app;
  },
  // The same servers with the adapters of another revision (bench/adapter-ab.mjs bundles them into
  // BENCH_REF_DIR): a before/after of an adapter on the same machine, in the same run.
  'fastify-keygate-ref': async () => {
    const { apiKeyAuth } = await import(`${process.env.BENCH_REF_DIR}/fastify.mjs`);
    const app = fastify();
    await app.register(apiKeyAuth, await auth());
    return app;
  },
  'hono-keygate-ref': async () => {
    const { apiKeyAuth } = await import(`${process.env.BENCH_REF_DIR}/hono.mjs`);
    const app = new Hono();
    app.use(apiKeyAuth({ ...(await auth()), clientIp: (c) => getConnInfo(c).remote.address }));
    return app;
  },
  'hono-keygate': async () => {
    const app = new Hono();
    app.use(honoAuth({ ...(await auth()), clientIp: (c) => getConnInfo(c).remote.address }));
    return app;
  },
};

async function start(name) {
  const made = await variants[name]?.();
  if (!made) throw new Error(`unknown variant "${name}"; one of ${Object.keys(variants).join(', ')}`);
  const [app, ...middleware] = Array.isArray(made) ? made : [made];
  if (name.startsWith('express')) {
    app.get(ROUTE, ...middleware, (_req, res) => res.json(payload));
    app.post(POST_ROUTE, ...middleware, express.json(), (req, res) => res.json({ ok: true, email: req.body.email }));
    return listen(app.listen(0, '127.0.0.1'));
  }
  if (name.startsWith('fastify')) {
    app.get(ROUTE, async () => payload);
    app.post(POST_ROUTE, async (request) => ({ ok: true, email: request.body.email }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    return app.server.address().port;
  }
  app.get(ROUTE, (c) => c.json(payload));
  app.post(POST_ROUTE, async (c) => c.json({ ok: true, email: (await c.req.json()).email }));
  return listen(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }));
}

const port = await start(process.argv[2]);
process.stdout.write(`${JSON.stringify({ port })}\n`);
// In order: a leased wrapper settles its slices before the store it settles them in is dropped.
process.on('SIGTERM', async () => {
  for (const cleanup of cleanups)
    await Promise.resolve()
      .then(cleanup)
      .catch(() => {});
  process.exit(0);
});
