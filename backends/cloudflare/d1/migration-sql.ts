import { SQLITE_LEDGER } from '../../sql/sqlite/ledger.js';
import { KEY_STORE_MIGRATIONS } from '../../sql/sqlite/migrations.js';

/**
 * The whole schema of `D1KeyStore`, `D1AuditLog` and `D1DashboardStore` as one SQL text, for a
 * Wrangler migration (`wrangler d1 migrations create`, then paste) or `wrangler d1 execute --file`.
 * It records the versions it creates in `keygate_migrations`, as `migrate()` does, so that a later
 * `migrate()` (after a keygate upgrade) applies only what is new. One statement per line (D1's
 * `exec` runs a script line by line). Run it on a database without keygate's tables.
 *
 * @example
 * // node -e "import('keygate/cloudflare').then((m) => process.stdout.write(m.migrationSql()))" > migrations/0001_keygate.sql
 * const sql = migrationSql();
 */
export function migrationSql(): string {
  const lines = [`${SQLITE_LEDGER};`];
  KEY_STORE_MIGRATIONS.forEach((statements, i) => {
    for (const statement of statements) lines.push(`${statement.replace(/\s+/g, ' ')};`);
    lines.push(
      `INSERT INTO keygate_migrations (version, applied_at) VALUES (${i + 1}, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));`,
    );
  });
  return `${lines.join('\n')}\n`;
}
