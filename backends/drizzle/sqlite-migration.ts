import { InvalidInputError } from 'keygate';
import { checkOptionNames } from 'keygate/store-kit';
import { KEY_STORE_MIGRATIONS } from '../sqlite/migrations.js';

/**
 * The newest keygate SQLite migration that {@link keygateSqliteTables}' tables describe. When
 * `KEY_STORE_MIGRATIONS` gains a version, the tables (sqlite-tables.ts) gain what it adds and this
 * number follows (a test compares them).
 */
const DESCRIBED_VERSION = 2;

// What a version holds that a Drizzle table cannot describe: triggers (made, and replaced), and rows
// (the audit retention's one).
const UNDESCRIBABLE = /^\s*(CREATE TRIGGER|DROP TRIGGER|INSERT)\b/;

/**
 * Options of {@link keygateSqliteMigrationSql}.
 *
 * @example
 * const options: KeygateSqliteMigrationSqlOptions = { after: 0 };
 */
export interface KeygateSqliteMigrationSqlOptions {
  /**
   * The keygate version the database already holds (the highest `version` in `keygate_migrations`):
   * the SQL covers only the versions after it. `0` for a first migration.
   *
   * @default 0
   */
  after?: number;
}

/**
 * The SQL of the custom drizzle-kit migration that completes keygate's SQLite tables after
 * drizzle-kit created them from {@link keygateSqliteTables}: the triggers Drizzle cannot describe (a
 * revoked key cannot be changed; the audit log refuses UPDATE, and a DELETE of an entry the
 * retention cutoff has not passed) and the cutoff's one row, then the versions in
 * `keygate_migrations`, so that a later `SqliteKeyStore.migrate()` finds the schema current and
 * changes nothing. Statements are separated by drizzle-kit's `--> statement-breakpoint`. Put it in a
 * file made by `drizzle-kit generate --custom`, after the migration that created the tables. Throws
 * `InvalidInputError` for an `after` that is not a version from 0 to the newest.
 *
 * @example
 * // npx drizzle-kit generate && npx drizzle-kit generate --custom --name=keygate, then:
 * writeFileSync('drizzle/0001_keygate.sql', keygateSqliteMigrationSql());
 */
export function keygateSqliteMigrationSql(options: KeygateSqliteMigrationSqlOptions = {}): string {
  checkOptionNames(options, ['after'], 'keygateSqliteMigrationSql');
  const after = options.after ?? 0;
  if (!Number.isInteger(after) || after < 0 || after > DESCRIBED_VERSION) {
    throw new InvalidInputError('after', `after must be a keygate version from 0 to ${DESCRIBED_VERSION}`);
  }
  const versions = KEY_STORE_MIGRATIONS.slice(after, DESCRIBED_VERSION).map((_, i) => after + i + 1);
  if (versions.length === 0) return `-- keygate: nothing to add after version ${after}\n`;
  const statements = versions.flatMap((v) => (KEY_STORE_MIGRATIONS[v - 1] ?? []).filter((s) => UNDESCRIBABLE.test(s)));
  const now = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
  const rows = versions.map((v) => `(${v}, ${now})`).join(', ');
  statements.push(`INSERT INTO keygate_migrations (version, applied_at) VALUES ${rows}`);
  const header = `-- keygate versions ${versions.join(', ')}: what Drizzle tables cannot describe\n`;
  return `${header}${statements.map((s) => `${s};`).join('\n--> statement-breakpoint\n')}\n`;
}
