// keygate/drizzle's PostgreSQL functions on their own: which tables and schema they describe, what the
// custom migration holds for each starting version, and which Drizzle databases the stores accept.
import { PGlite } from '@electric-sql/pglite';
import Database from 'better-sqlite3';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { getTableConfig as getMysqlTableConfig } from 'drizzle-orm/mysql-core';
import { drizzle as drizzleMysql } from 'drizzle-orm/mysql2';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePGlite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import { getTableConfig as getSqliteTableConfig } from 'drizzle-orm/sqlite-core';
import { InvalidInputError } from 'keygate';
import {
  drizzleMysqlStores,
  drizzlePgStores,
  drizzleSqliteStores,
  keygateMysqlMigrationSql,
  keygateMysqlTables,
  keygatePgMigrationSql,
  keygatePgTables,
  keygateSqliteMigrationSql,
  keygateSqliteTables,
} from 'keygate/drizzle';
import { MysqlCreditLedger, MysqlKeyStore, MysqlRateLimiter } from 'keygate/mysql';
import { PostgresCreditLedger, PostgresKeyStore, PostgresRateLimiter } from 'keygate/postgres';
import { SqliteCreditLedger, SqliteKeyStore, SqliteRateLimiter } from 'keygate/sqlite';
import mysql from 'mysql2/promise';
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { keyStoreMigrations } from '../../backends/mysql/migrations.js';
import { MIGRATIONS } from '../../backends/postgres/migrations.js';
import { KEY_STORE_MIGRATIONS } from '../../backends/sqlite/migrations.js';
import { MYSQL_URL } from '../stores/support/mysql.js';
import { PG_URL } from '../stores/support/services.js';

/** The credit ledger's MySQL procedures (after the prefix), in the order migrate() creates them. */
const CREDIT_PROCEDURE_NAMES = ['credit_sweep_v1', 'credit_hold_v1', 'credit_settle_v1', 'credit_release_v1'];
/** The credit ledger's PostgreSQL functions, in the order migrate() creates them. */
const CREDIT_FUNCTION_NAMES = [
  'keygate_credit_sweep',
  'keygate_credit_hold',
  'keygate_credit_settle',
  'keygate_credit_release',
];

function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (err) {
    return err;
  }
  return undefined;
}

// PGlite takes seconds to start here: one in-memory database for the file.
let pglite: Promise<PGlite> | undefined;
const embedded = () => {
  pglite ??= PGlite.create();
  return pglite;
};
afterAll(async () => {
  if (pglite) await (await pglite).close();
});

const refusedField = (field: string) => expect.objectContaining({ code: 'invalid_input', field });

describe('keygatePgTables', () => {
  it('describes every table the keygate classes create, in public by default', () => {
    const { keygateSchema, ...tables } = keygatePgTables();
    expect(keygateSchema).toBeUndefined();
    const configs = Object.values(tables).map((t) => getTableConfig(t));
    expect(configs.map((c) => c.name).sort()).toEqual([
      'keygate_audit',
      'keygate_audit_retention',
      'keygate_credit_balances',
      'keygate_credit_entries',
      'keygate_credit_holds',
      'keygate_key_activity',
      'keygate_keys',
      'keygate_migrations',
      'keygate_outbox',
      'keygate_rate_limits',
      'keygate_usage',
      'keygate_used_tokens',
      'keygate_webhook_deliveries',
      'keygate_webhook_endpoints',
    ]);
    expect(configs.every((c) => c.schema === undefined)).toBe(true);
  });

  it('puts every table in the pgSchema it returns when given another schema', () => {
    const { keygateSchema, ...tables } = keygatePgTables({ schema: 'billing' });
    expect(keygateSchema?.schemaName).toBe('billing');
    expect(new Set(Object.values(tables).map((t) => getTableConfig(t).schema))).toEqual(new Set(['billing']));
  });

  it('refuses a schema that is not a lower-case identifier, naming the field', () => {
    for (const schema of ['Billing', 'a"; DROP', '', 'x'.repeat(41)]) {
      const err = thrown(() => keygatePgTables({ schema }));
      expect(err).toBeInstanceOf(InvalidInputError);
      expect(err).toEqual(refusedField('schema'));
    }
  });
});

describe('keygatePgMigrationSql', () => {
  const statements = (sql: string) => sql.split('--> statement-breakpoint').map((s) => s.trim());

  it("holds the triggers, their functions and every version, for the schema's name", () => {
    const sql = keygatePgMigrationSql({ schema: 'billing' });
    const parts = statements(sql);
    expect(
      parts.map((s) =>
        s
          .replace(/^--.*\n/, '')
          .replace(/^CREATE OR REPLACE /, 'CREATE ')
          .split(/[\s(]/, 3)
          .join(' '),
      ),
    ).toEqual([
      'CREATE FUNCTION "billing".keygate_keys_revoked_is_final',
      'CREATE TRIGGER keygate_keys_revoked_is_final',
      'CREATE FUNCTION "billing".keygate_audit_is_append_only',
      'CREATE TRIGGER keygate_audit_no_update_or_delete',
      'CREATE TRIGGER keygate_audit_no_truncate',
      'INSERT INTO "billing".keygate_audit_retention',
      'CREATE FUNCTION "billing".keygate_audit_deletes_past_retention',
      'DROP TRIGGER keygate_audit_no_update_or_delete',
      'CREATE TRIGGER keygate_audit_no_update',
      'CREATE TRIGGER keygate_audit_no_delete',
      ...CREDIT_FUNCTION_NAMES.map((name) => `CREATE FUNCTION "billing".${name}`),
      'INSERT INTO "billing".keygate_migrations',
    ]);
    expect(parts.at(-1)).toBe(
      'INSERT INTO "billing".keygate_migrations (version) VALUES (1), (2), (3), (4), (5), (6), (7), (8);',
    );
  });

  it('covers only the versions after `after`, for a database already at that version', () => {
    const parts = statements(keygatePgMigrationSql({ after: 4 }));
    expect(parts).toHaveLength(9 + CREDIT_FUNCTION_NAMES.length);
    expect(parts.join('\n')).not.toContain('keygate_keys_revoked_is_final');
    expect(parts.at(-1)).toBe('INSERT INTO "public".keygate_migrations (version) VALUES (5), (6), (7), (8);');
  });

  it("holds the credit ledger's functions after the newest version too, and no version", () => {
    const parts = statements(keygatePgMigrationSql({ after: 8 }));
    expect(parts[0]).toMatch(/^-- keygate: nothing to add after version 8 but the credit ledger's functions\n/);
    expect(
      parts.map((s) =>
        s
          .replace(/^--.*\n/, '')
          .split(/[\s(]/, 5)
          .join(' '),
      ),
    ).toEqual(CREDIT_FUNCTION_NAMES.map((name) => `CREATE OR REPLACE FUNCTION "public".${name}`));
  });

  it('describes every migration keygate has: a new one fails here until the Drizzle tables follow it', () => {
    expect(() => keygatePgMigrationSql({ after: MIGRATIONS.length })).not.toThrow();
    expect(thrown(() => keygatePgMigrationSql({ after: MIGRATIONS.length + 1 }))).toEqual(refusedField('after'));
  });

  it('refuses an `after` that is not a version, and a bad schema, naming the field', () => {
    for (const after of [-1, 1.5, Number.NaN, '3' as unknown as number]) {
      expect(thrown(() => keygatePgMigrationSql({ after }))).toEqual(refusedField('after'));
    }
    expect(thrown(() => keygatePgMigrationSql({ schema: 'A' }))).toEqual(refusedField('schema'));
  });
});

describe('drizzlePgStores', () => {
  it("builds the Postgres classes on the db's own client, in the schema given, without migrating", async () => {
    const client = await embedded();
    const stores = drizzlePgStores(drizzlePGlite(client), { schema: 'kg', rateLimiterTimeoutMs: 75 });
    expect(stores.keys).toBeInstanceOf(PostgresKeyStore);
    expect(stores.rateLimiter).toBeInstanceOf(PostgresRateLimiter);
    expect(stores.credits).toBeInstanceOf(PostgresCreditLedger);
    expect([stores.keys.schema, stores.rateLimiter.schema, stores.credits.schema, stores.dashboard.schema]).toEqual([
      'kg',
      'kg',
      'kg',
      'kg',
    ]);
    expect([stores.rateLimiter.timeoutMs, stores.credits.timeoutMs]).toEqual([75, 1_000]);
    const { rows } = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = 'kg'");
    expect(rows).toEqual([]);
  });

  it('accepts a node-postgres db made from a connection string (a Pool underneath)', async () => {
    const db = drizzlePg(PG_URL);
    try {
      expect(drizzlePgStores(db).keys).toBeInstanceOf(PostgresKeyStore);
    } finally {
      await db.$client.end();
    }
  });

  it('refuses a postgres-js db, saying what to use instead', async () => {
    const sql = postgres(PG_URL, { max: 1 });
    try {
      const err = thrown(() => drizzlePgStores(drizzlePostgresJs(sql)));
      expect(err).toEqual(refusedField('db'));
      expect(String((err as Error).message)).toMatch(/postgres-js is not supported.*node-postgres over a pg Pool/);
    } finally {
      await sql.end();
    }
  });

  it('refuses a node-postgres db over a single pg Client', () => {
    const err = thrown(() => drizzlePgStores(drizzlePg({ client: new pg.Client({ connectionString: PG_URL }) })));
    expect(err).toEqual(refusedField('db'));
    expect(String((err as Error).message)).toMatch(/single pg Client/);
  });

  it('refuses what is not a Drizzle db, and a bad schema, naming the field', async () => {
    for (const db of [undefined, null, {}, { $client: {} }]) {
      expect(thrown(() => drizzlePgStores(db as never))).toEqual(refusedField('db'));
    }
    const db = drizzlePGlite(await embedded());
    expect(thrown(() => drizzlePgStores(db, { schema: 'No' }))).toEqual(refusedField('schema'));
  });
});

describe('keygateSqliteTables', () => {
  it('describes every table the keygate/sqlite classes create, the change table included', () => {
    const names = Object.values(keygateSqliteTables()).map((t) => getSqliteTableConfig(t).name);
    expect(names.sort()).toEqual(
      [
        'keygate_audit',
        'keygate_audit_retention',
        'keygate_changes',
        'keygate_credit_balances',
        'keygate_credit_entries',
        'keygate_credit_holds',
        'keygate_key_activity',
        'keygate_keys',
        'keygate_migrations',
        'keygate_outbox',
        'keygate_rate_limits',
        'keygate_usage',
        'keygate_used_tokens',
        'keygate_webhook_deliveries',
        'keygate_webhook_endpoints',
      ].sort(),
    );
  });
});

describe('keygateSqliteMigrationSql', () => {
  const statements = (sql: string) => sql.split('--> statement-breakpoint').map((s) => s.trim());

  it('holds the triggers and the version, stamped with the time it runs', () => {
    const parts = statements(keygateSqliteMigrationSql());
    expect(
      parts.map((s) =>
        s
          .replace(/^--.*\n/, '')
          .split(/\s/, 3)
          .join(' '),
      ),
    ).toEqual([
      'CREATE TRIGGER keygate_keys_revoked_is_final',
      'CREATE TRIGGER keygate_audit_no_update',
      'CREATE TRIGGER keygate_audit_no_delete',
      'INSERT INTO keygate_audit_retention',
      'DROP TRIGGER keygate_audit_no_delete;',
      'CREATE TRIGGER keygate_audit_no_delete',
      'INSERT INTO keygate_migrations',
    ]);
    expect(parts.at(-1)).toBe(
      "INSERT INTO keygate_migrations (version, applied_at) VALUES (1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), (2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));",
    );
    expect(keygateSqliteMigrationSql({ after: 2 })).toBe('-- keygate: nothing to add after version 2\n');
  });

  it('describes every migration keygate/sqlite has: a new one fails here until the Drizzle tables follow it', () => {
    expect(() => keygateSqliteMigrationSql({ after: KEY_STORE_MIGRATIONS.length })).not.toThrow();
    expect(thrown(() => keygateSqliteMigrationSql({ after: KEY_STORE_MIGRATIONS.length + 1 }))).toEqual(
      refusedField('after'),
    );
    for (const after of [-1, 0.5, '1' as unknown as number]) {
      expect(thrown(() => keygateSqliteMigrationSql({ after }))).toEqual(refusedField('after'));
    }
  });
});

describe('drizzleSqliteStores', () => {
  it("builds the keygate/sqlite classes on the db's better-sqlite3 connection, without migrating", () => {
    const database = new Database(':memory:');
    try {
      const stores = drizzleSqliteStores(drizzleSqlite(database), { busyTimeoutMs: 300, creditLedgerTimeoutMs: 40 });
      expect(stores.keys).toBeInstanceOf(SqliteKeyStore);
      expect(stores.rateLimiter).toBeInstanceOf(SqliteRateLimiter);
      expect(stores.credits).toBeInstanceOf(SqliteCreditLedger);
      expect([stores.keys.busyTimeoutMs, stores.dashboard.busyTimeoutMs]).toEqual([300, 300]);
      expect([stores.rateLimiter.timeoutMs, stores.credits.timeoutMs]).toEqual([250, 40]);
      expect(database.prepare(`SELECT name FROM sqlite_master`).all()).toEqual([]);
    } finally {
      database.close();
    }
  });

  it('refuses what is not a better-sqlite3 Drizzle db, naming the field', () => {
    for (const db of [undefined, null, {}, { $client: {} }, { $client: { prepare() {}, exec() {} } }]) {
      const err = thrown(() => drizzleSqliteStores(db as never));
      expect(err).toEqual(refusedField('db'));
      expect(String((err as Error).message)).toMatch(/drizzle-orm\/better-sqlite3/);
    }
  });
});

describe('keygateMysqlTables and keygateMysqlMigrationSql', () => {
  it('names every table with the prefix, and refuses a bad prefix naming the field', () => {
    const names = Object.values(keygateMysqlTables({ tablePrefix: 'kg_' })).map((t) => getMysqlTableConfig(t).name);
    expect(names).toHaveLength(16);
    expect(names.every((n) => n.startsWith('kg_'))).toBe(true);
    expect(thrown(() => keygateMysqlTables({ tablePrefix: 'K`; DROP' }))).toEqual(refusedField('tablePrefix'));
    expect(thrown(() => keygateMysqlMigrationSql({ tablePrefix: '1x' }))).toEqual(refusedField('tablePrefix'));
  });

  it("holds the triggers, the change counter's row and the version, for the prefix", () => {
    const parts = keygateMysqlMigrationSql({ tablePrefix: 'kg_' })
      .split('--> statement-breakpoint')
      .map((s) => s.trim().replace(/^--.*\n/, ''));
    expect(parts.map((s) => s.split(/\s/, 3).join(' '))).toEqual([
      'DROP TRIGGER IF',
      'CREATE TRIGGER kg_keys_revoked_is_final',
      'DROP TRIGGER IF',
      'CREATE TRIGGER kg_audit_no_update',
      'DROP TRIGGER IF',
      'CREATE TRIGGER kg_audit_no_delete',
      'INSERT IGNORE INTO',
      'INSERT IGNORE INTO',
      'DROP TRIGGER IF',
      'CREATE TRIGGER kg_audit_no_delete',
      ...CREDIT_PROCEDURE_NAMES.flatMap((name) => ['DROP PROCEDURE IF', `CREATE PROCEDURE kg_${name}(IN`]),
      'INSERT INTO kg_migrations',
    ]);
    expect(parts.at(-1)).toBe(
      'INSERT INTO kg_migrations (version, applied_at) VALUES (1, UTC_TIMESTAMP(3)), (2, UTC_TIMESTAMP(3));',
    );
    const newest = keygateMysqlMigrationSql({ after: 2 });
    expect(newest).toMatch(/^-- keygate: nothing to add after version 2 but the credit ledger's procedures\n/);
    expect(newest).not.toContain('keygate_migrations');
    expect(newest.split('--> statement-breakpoint')).toHaveLength(2 * CREDIT_PROCEDURE_NAMES.length);
    expect(thrown(() => keygateMysqlMigrationSql({ after: keyStoreMigrations('k_').length + 1 }))).toEqual(
      refusedField('after'),
    );
  });
});

describe('drizzleMysqlStores', () => {
  it("builds the keygate/mysql classes on the db's pool, with the prefix given", async () => {
    const pool = mysql.createPool({ uri: MYSQL_URL });
    try {
      const stores = drizzleMysqlStores(drizzleMysql(pool), { tablePrefix: 'kg_', rateLimiterTimeoutMs: 60 });
      expect(stores.keys).toBeInstanceOf(MysqlKeyStore);
      expect(stores.rateLimiter).toBeInstanceOf(MysqlRateLimiter);
      expect(stores.credits).toBeInstanceOf(MysqlCreditLedger);
      expect(stores.keys.tablePrefix).toBe('kg_');
      expect(stores.rateLimiter.timeoutMs).toBe(60);
      expect(thrown(() => drizzleMysqlStores(drizzleMysql(pool), { tablePrefix: 'A' }))).toEqual(
        refusedField('tablePrefix'),
      );
    } finally {
      await pool.end();
    }
  });

  it('refuses a db over a single mysql2 Connection, and what is not a Drizzle db, naming `db`', async () => {
    const connection = await mysql.createConnection({ uri: MYSQL_URL });
    try {
      const err = thrown(() => drizzleMysqlStores(drizzleMysql(connection)));
      expect(err).toEqual(refusedField('db'));
      expect(String((err as Error).message)).toMatch(/single mysql2 Connection.*Pool/);
    } finally {
      await connection.end();
    }
    for (const db of [undefined, {}, { $client: {} }]) {
      expect(thrown(() => drizzleMysqlStores(db as never))).toEqual(refusedField('db'));
    }
  });
});
