import { generateMySQLDrizzleJson, generateMySQLMigration } from 'drizzle-kit/api';
import { keygateMysqlMigrationSql, keygateMysqlTables } from 'keygate/drizzle';
import mysql from 'mysql2/promise';
import { MYSQL_URL } from '../../stores/support/mysql.js';
import { RUN_ID } from '../../stores/support/services.js';
import { KitProject } from './drizzle-kit.js';

/** The statements drizzle-kit's generator makes from keygateMysqlTables, then keygate's custom migration. */
export async function mysqlStatementsOfDrizzleKit(tablePrefix = 'keygate_'): Promise<string[]> {
  const generated = await generateMySQLMigration(
    await generateMySQLDrizzleJson({}),
    await generateMySQLDrizzleJson(keygateMysqlTables({ tablePrefix })),
  );
  return [...generated, ...keygateMysqlMigrationSql({ tablePrefix }).split('--> statement-breakpoint')];
}

/** An application's MySQL Drizzle project: keygateMysqlTables beside a `widgets` table, migrated into `url`. */
export class MysqlDrizzleProject extends KitProject {
  constructor(url: string) {
    super(
      `import { mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { keygateMysqlTables } from 'keygate/drizzle';

export const widgets = mysqlTable('widgets', { id: varchar('id', { length: 64 }).primaryKey(), ownerKeyId: varchar('owner_key_id', { length: 255 }).notNull() });

export const {
  keygateMigrations, keygateKeys, keygateUsage, keygateKeyActivity, keygateUsedTokens, keygateAudit, keygateAuditRetention,
  keygateOutbox, keygateWebhookEndpoints, keygateWebhookDeliveries, keygateChangeCounter, keygateChanges,
  keygateRateLimits, keygateCreditBalances, keygateCreditHolds, keygateCreditEntries,
} = keygateMysqlTables();
`,
      `export default { dialect: 'mysql', schema: './schema.ts', out: './drizzle', dbCredentials: { url: ${JSON.stringify(url)} } };\n`,
      () => keygateMysqlMigrationSql(),
    );
  }
}

let count = 0;

/**
 * A fresh database on the test server, created with the server's default character set (not
 * keygate's), and how to drop it.
 */
export async function freshMysqlDatabase(label: string): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `keygate_dz_${RUN_ID}_${label}${++count}`;
  await admin(`CREATE DATABASE \`${name}\``);
  const url = new URL(MYSQL_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS \`${name}\``) };
}

async function admin(statement: string): Promise<void> {
  const conn = await mysql.createConnection({ uri: MYSQL_URL });
  try {
    await conn.query(statement);
  } finally {
    await conn.end();
  }
}

/**
 * keygate's part of a MySQL/MariaDB database (tables `prefix%`) as information_schema describes it:
 * columns (type with length, nullability, default, charset, collation, extra), indexes (columns in
 * order, uniqueness, prefix lengths), constraints (primary, unique, check, with the check clauses),
 * triggers (timing, event, body), and the versions in `<prefix>migrations`. Each table's default
 * collation is reported apart (`tableCollations`): drizzle-kit writes no table options.
 * The level of a check (a column's or the table's) is left out: keygate's DDL writes them inline,
 * drizzle-kit at the table's end, and MariaDB enforces both alike.
 */
export async function mysqlCatalogOf(pool: mysql.Pool, database: string, prefix = 'keygate_') {
  const rows = async (text: string) =>
    (await pool.query({ sql: text, values: [database, `${prefix}%`] }))[0] as Record<string, unknown>[];
  const tables = await rows(
    `SELECT TABLE_NAME AS name, TABLE_COLLATION AS collation, ENGINE AS engine FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ? ORDER BY TABLE_NAME`,
  );
  const columns = await rows(
    `SELECT TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT,
        CHARACTER_SET_NAME, COLLATION_NAME, EXTRA, COLUMN_KEY
      FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ? ORDER BY TABLE_NAME, ORDINAL_POSITION`,
  );
  const indexes = await rows(
    `SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, SUB_PART, INDEX_TYPE
      FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ?
      ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
  );
  const constraints = await rows(
    `SELECT TABLE_NAME, CONSTRAINT_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS
      WHERE TABLE_SCHEMA = ? AND TABLE_NAME LIKE ? ORDER BY TABLE_NAME, CONSTRAINT_TYPE, CONSTRAINT_NAME`,
  );
  const checks = await rows(
    `SELECT TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
      WHERE CONSTRAINT_SCHEMA = ? AND TABLE_NAME LIKE ? ORDER BY TABLE_NAME, CONSTRAINT_NAME`,
  );
  const triggers = await rows(
    `SELECT TRIGGER_NAME, EVENT_OBJECT_TABLE, ACTION_TIMING, EVENT_MANIPULATION, ACTION_ORIENTATION, ACTION_STATEMENT
      FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? AND EVENT_OBJECT_TABLE LIKE ? ORDER BY TRIGGER_NAME`,
  );
  const hasVersions = tables.some((t) => t.name === `${prefix}migrations`);
  const versions = hasVersions
    ? (
        (await pool.query(`SELECT version FROM \`${prefix}migrations\` ORDER BY version`))[0] as { version: number }[]
      ).map((r) => r.version)
    : [];
  const counter = tables.some((t) => t.name === `${prefix}change_counter`)
    ? (await pool.query(`SELECT id, seq FROM \`${prefix}change_counter\``))[0]
    : [];
  return {
    tables: tables.map((t) => ({ name: t.name, engine: t.engine })),
    tableCollations: Object.fromEntries(tables.map((t) => [t.name, t.collation])),
    columns,
    indexes,
    constraints,
    checks,
    triggers,
    versions,
    counter,
  };
}
