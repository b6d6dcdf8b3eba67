import { InvalidInputError } from 'keygate';
import { checkOptionNames } from 'keygate/store-kit';
import { CREDIT_FUNCTIONS } from '../postgres/credit-functions.js';
import { MIGRATIONS } from '../postgres/migrations.js';
import { validSchema } from '../postgres/sql-client.js';

/**
 * The newest keygate migration that {@link keygatePgTables}' tables describe. When `MIGRATIONS` gains
 * a version, the tables (pg-tables.ts) gain what it adds and this number follows (a test compares them).
 */
const DESCRIBED_VERSION = 8;

// What a version holds that a Drizzle table cannot describe: functions and their triggers (made,
// and replaced), and rows (the audit retention's one).
const UNDESCRIBABLE = /^\s*(CREATE (FUNCTION|TRIGGER)|DROP TRIGGER|INSERT)\b/;

/**
 * Options of {@link keygatePgMigrationSql}.
 *
 * @example
 * const options: KeygatePgMigrationSqlOptions = { schema: 'keygate', after: 0 };
 */
export interface KeygatePgMigrationSqlOptions {
  /** The schema given to `keygatePgTables`. @default 'public' */
  schema?: string;
  /**
   * The keygate version the database already holds (the highest `version` in `keygate_migrations`):
   * the SQL covers only the versions after it. `0` for a first migration.
   *
   * @default 0
   */
  after?: number;
}

/**
 * The SQL of the custom drizzle-kit migration that completes keygate's tables after drizzle-kit
 * created them from {@link keygatePgTables}: the functions and triggers Drizzle cannot describe (a
 * revoked key cannot be changed; the audit log refuses UPDATE, TRUNCATE and a DELETE of an entry
 * the retention cutoff has not passed) and the cutoff's one row, the credit
 * ledger's functions (its `hold`, `settle` and `release` call them; `CREATE OR REPLACE`, so every
 * migration made holds them, also one made with `after` at the newest version, for a database made
 * before they existed), then the versions in `keygate_migrations`, so that a later
 * `PostgresKeyStore.migrate()` finds the schema current and changes nothing. Statements are separated by drizzle-kit's `--> statement-breakpoint`.
 * Put it in a file made by `drizzle-kit generate --custom`, after the migration that created the tables.
 * Throws `InvalidInputError` for a bad `schema` or an `after` that is not a version from 0 to the newest.
 *
 * @example
 * // npx drizzle-kit generate && npx drizzle-kit generate --custom --name=keygate, then:
 * writeFileSync('drizzle/0001_keygate.sql', keygatePgMigrationSql({ schema: 'keygate' }));
 */
export function keygatePgMigrationSql(options: KeygatePgMigrationSqlOptions = {}): string {
  checkOptionNames(options, ['schema', 'after'], 'keygatePgMigrationSql');
  const schema = `"${validSchema(options.schema ?? 'public')}"`;
  const after = options.after ?? 0;
  if (!Number.isInteger(after) || after < 0 || after > DESCRIBED_VERSION) {
    throw new InvalidInputError('after', `after must be a keygate version from 0 to ${DESCRIBED_VERSION}`);
  }
  const versions = MIGRATIONS.slice(after, DESCRIBED_VERSION).map((_, i) => after + i + 1);
  const statements = versions.flatMap((v) =>
    (MIGRATIONS[v - 1] ?? []).filter((s) => UNDESCRIBABLE.test(s)).map((s) => s.replaceAll('T.', `${schema}.`)),
  );
  // The credit ledger's functions belong to no version: CREATE OR REPLACE, in every migration made.
  statements.push(...CREDIT_FUNCTIONS.map((s) => s.replaceAll('S.', `${schema}.`)));
  if (versions.length > 0) {
    statements.push(
      `INSERT INTO ${schema}.keygate_migrations (version) VALUES ${versions.map((v) => `(${v})`).join(', ')}`,
    );
  }
  const header =
    versions.length > 0
      ? `-- keygate versions ${versions.join(', ')}: what Drizzle tables cannot describe\n`
      : `-- keygate: nothing to add after version ${after} but the credit ledger's functions\n`;
  return `${header}${statements.map((s) => `${s};`).join('\n--> statement-breakpoint\n')}\n`;
}
