import { InvalidInputError } from 'keygate';
import { checkOptionNames } from 'keygate/store-kit';
import { creditProcedures } from '../mysql/credit-procedures.js';
import { keyStoreMigrations } from '../mysql/migrations.js';
import { validTablePrefix } from '../mysql/sql-client.js';

/**
 * The newest keygate MySQL migration that {@link keygateMysqlTables}' tables describe. When
 * `keyStoreMigrations` gains a version, the tables (mysql-tables.ts) gain what it adds and this number
 * follows (a test compares them).
 */
const DESCRIBED_VERSION = 2;

// What a version holds that a Drizzle table cannot describe: triggers, and rows (the change counter's,
// the audit retention's). Its guarded index additions (SET, PREPARE...) are described by the tables.
const UNDESCRIBABLE = /^\s*(CREATE TRIGGER|DROP TRIGGER|INSERT)\b/;

/**
 * Options of {@link keygateMysqlMigrationSql}.
 *
 * @example
 * const options: KeygateMysqlMigrationSqlOptions = { tablePrefix: 'keygate_', after: 0 };
 */
export interface KeygateMysqlMigrationSqlOptions {
  /** The `tablePrefix` given to `keygateMysqlTables`. @default 'keygate_' */
  tablePrefix?: string;
  /**
   * The keygate version the database already holds (the highest `version` in `<prefix>migrations`):
   * the SQL covers only the versions after it. `0` for a first migration.
   *
   * @default 0
   */
  after?: number;
}

/**
 * The SQL of the custom drizzle-kit migration that completes keygate's MySQL/MariaDB tables after
 * drizzle-kit created them from {@link keygateMysqlTables}: the triggers Drizzle cannot describe (a
 * revoked key cannot be changed; the audit log refuses UPDATE, and a DELETE of an entry the
 * retention cutoff has not passed), the change counter's and the audit retention's one row, the credit ledger's stored procedures (its `hold`, `settle` and `release` call them; every
 * migration made holds them, dropped if there and made again, also one made with `after` at the
 * newest version, for tables made before they existed), then the versions in `<prefix>migrations`, so that a later `MysqlKeyStore.migrate()` finds the
 * schema current and changes nothing. Statements are separated by drizzle-kit's
 * `--> statement-breakpoint`. Put it in a file made by `drizzle-kit generate --custom`, after the
 * migration that created the tables. Throws `InvalidInputError` for a bad `tablePrefix` or an `after`
 * that is not a version from 0 to the newest.
 *
 * @example
 * // npx drizzle-kit generate && npx drizzle-kit generate --custom --name=keygate, then:
 * writeFileSync('drizzle/0001_keygate.sql', keygateMysqlMigrationSql());
 */
export function keygateMysqlMigrationSql(options: KeygateMysqlMigrationSqlOptions = {}): string {
  checkOptionNames(options, ['tablePrefix', 'after'], 'keygateMysqlMigrationSql');
  const prefix = validTablePrefix(options.tablePrefix ?? 'keygate_');
  const after = options.after ?? 0;
  if (!Number.isInteger(after) || after < 0 || after > DESCRIBED_VERSION) {
    throw new InvalidInputError('after', `after must be a keygate version from 0 to ${DESCRIBED_VERSION}`);
  }
  const migrations = keyStoreMigrations(prefix);
  const versions = migrations.slice(after, DESCRIBED_VERSION).map((_, i) => after + i + 1);
  const statements = versions.flatMap((v) => (migrations[v - 1] ?? []).filter((s) => UNDESCRIBABLE.test(s)));
  // The credit ledger's procedures belong to no version: dropped if there and made again, in every migration made.
  for (const [name, statement] of creditProcedures(prefix)) {
    statements.push(`DROP PROCEDURE IF EXISTS ${name}`, statement);
  }
  if (versions.length > 0) {
    const rows = versions.map((v) => `(${v}, UTC_TIMESTAMP(3))`).join(', ');
    statements.push(`INSERT INTO ${prefix}migrations (version, applied_at) VALUES ${rows}`);
  }
  const header =
    versions.length > 0
      ? `-- keygate versions ${versions.join(', ')}: what Drizzle tables cannot describe\n`
      : `-- keygate: nothing to add after version ${after} but the credit ledger's procedures\n`;
  return `${header}${statements.map((s) => `${s};`).join('\n--> statement-breakpoint\n')}\n`;
}
