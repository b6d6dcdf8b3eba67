// Bulk loading for the scale benchmark: the working set's keys are real keys (generated, hashed, their
// records shaped exactly as KeyManager writes them); the rest are filler rows written by the database
// itself, so that 1,000,000 rows load in minutes.
import { generateKey, hashKey, keyHint } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import { RedisKeyStore } from 'keygate/redis';
import pg from 'pg';
import { createClient } from 'redis';

export const PG_URL = process.env.KEYGATE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.KEYGATE_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const SCHEMA = 'keygate_scale';
export const REDIS_PREFIX = 'keygate-scale:';
const BATCH = 10_000;

/** `size` raw keys with their digests: the keys the benchmark's requests carry. */
export async function workingSet(size) {
  const keys = new Array(size);
  const hashes = new Array(size);
  for (let i = 0; i < size; i++) {
    keys[i] = generateKey({ mode: 'test' });
    hashes[i] = await hashKey(keys[i]);
  }
  return { keys, hashes };
}

/** The record KeyManager would write for working-set key `i`. */
export function recordOf(set, i) {
  const now = new Date(Date.UTC(2026, 0, 1)).toISOString();
  return {
    id: `key_ws${i}`,
    hash: set.hashes[i],
    accountId: `acct_${i % 1000}`,
    name: `working ${i}`,
    mode: 'test',
    status: 'active',
    permissions: ['email:verify'],
    allowedIps: [],
    hint: keyHint(set.keys[i]),
    createdAt: now,
    updatedAt: now,
    expiresAt: null,
    revokedAt: null,
    rotatedFrom: null,
    rotatedTo: null,
    metadata: {},
    version: 1,
  };
}

export async function openPostgres(options = {}) {
  const pool = new pg.Pool({ connectionString: PG_URL, max: options.max ?? 8 });
  const store = new PostgresKeyStore({ client: pool, schema: SCHEMA });
  return {
    pool,
    store,
    close: async () => {
      await store.close?.();
      await pool.end();
    },
  };
}

export async function openRedis() {
  const client = createClient({ url: REDIS_URL });
  client.on('error', () => {});
  await client.connect();
  const store = new RedisKeyStore({ client, prefix: REDIS_PREFIX });
  return {
    client,
    store,
    close: async () => {
      await store.close?.();
      await client.close();
    },
  };
}

/** Fresh schema; the working set through one statement per batch, the filler through generate_series. */
export async function loadPostgres({ pool, store }, set, total) {
  const started = performance.now();
  await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await store.migrate();
  const table = `${SCHEMA}.keygate_keys`;
  for (let from = 0; from < set.keys.length; from += BATCH) {
    const rows = [];
    for (let i = from; i < Math.min(from + BATCH, set.keys.length); i++) rows.push(recordOf(set, i));
    await pool.query(
      `INSERT INTO ${table} (id, hash, account_id, name, mode, status, permissions, allowed_ips, hint, created_at, updated_at, metadata, version)
       SELECT id, hash, account_id, name, 'test', 'active', '["email:verify"]', '[]', hint, $6, $6, '{}', 1
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS t(id, hash, account_id, hint, name)`,
      [...['id', 'hash', 'accountId', 'hint', 'name'].map((k) => rows.map((r) => r[k])), rows[0].createdAt],
    );
  }
  const filler = total - set.keys.length;
  for (let from = 1; from <= filler; from += 100_000) {
    const to = Math.min(from + 99_999, filler);
    await pool.query(
      `INSERT INTO ${table} (id, hash, account_id, name, mode, status, permissions, allowed_ips, hint, created_at, updated_at, metadata, version)
       SELECT 'key_f' || i, encode(sha256(('filler-' || i)::bytea), 'hex'), 'acct_f' || (i % 10000), 'filler ' || i,
              'live', 'active', '["email:verify"]', '[]', 'mk_live_…' || lpad(i::text, 4, '0'), now(), now(), '{}', 1
       FROM generate_series($1::int, $2::int) AS i`,
      [from, to],
    );
  }
  await pool.query(`ANALYZE ${table}`);
  const { rows } = await pool.query(
    `SELECT count(*)::int AS n, pg_total_relation_size('${table}') AS bytes FROM ${table}`,
  );
  return { rows: rows[0].n, seconds: (performance.now() - started) / 1000, tableMiB: Number(rows[0].bytes) / 2 ** 20 };
}

/** The working set through pipelined writes in the store's own layout, the filler through a server-side loop. */
export async function loadRedis({ client }, set, total) {
  const started = performance.now();
  await dropPrefix(client);
  for (let from = 0; from < set.keys.length; from += BATCH) {
    const multi = client.multi();
    for (let i = from; i < Math.min(from + BATCH, set.keys.length); i++) {
      const r = recordOf(set, i);
      multi.set(`${REDIS_PREFIX}key:${r.id}`, JSON.stringify(r));
      multi.set(`${REDIS_PREFIX}hash:${r.hash}`, r.id);
      multi.sAdd(`${REDIS_PREFIX}account:${r.accountId}`, r.id);
    }
    await multi.execAsPipeline();
  }
  const template = JSON.stringify({
    ...recordOf(set, 0),
    id: '@ID@',
    hash: '@HASH@',
    accountId: 'acct_filler',
    mode: 'live',
  });
  const filler = total - set.keys.length;
  for (let from = 1; from <= filler; from += 50_000) {
    await client.eval(FILL, {
      keys: [],
      arguments: [REDIS_PREFIX, template, String(from), String(Math.min(from + 49_999, filler))],
    });
  }
  const keys = Number(await client.dbSize());
  const memory = String(await client.info('memory')).match(/used_memory:(\d+)/);
  return {
    rows: total,
    seconds: (performance.now() - started) / 1000,
    redisKeys: keys,
    usedMemoryMiB: Number(memory?.[1] ?? 0) / 2 ** 20,
  };
}

// ARGV: prefix, record template, first and last filler number. Digests are SHA-1-shaped fillers padded
// to 64 characters: they only need to be distinct and never equal a real key's digest.
const FILL = `
local prefix, template = ARGV[1], ARGV[2]
for i = tonumber(ARGV[3]), tonumber(ARGV[4]) do
  local id = 'key_f' .. i
  local hash = redis.sha1hex('filler-' .. i) .. string.rep('0', 24)
  local json = string.gsub(string.gsub(template, '@ID@', id), '@HASH@', hash)
  redis.call('SET', prefix .. 'key:' .. id, json)
  redis.call('SET', prefix .. 'hash:' .. hash, id)
end
return 1`;

async function dropPrefix(client) {
  let cursor = '0';
  do {
    const reply = await client.scan(cursor, { MATCH: `${REDIS_PREFIX}*`, COUNT: 10_000 });
    cursor = String(reply.cursor);
    if (reply.keys.length) await client.unlink(reply.keys);
  } while (cursor !== '0');
}
