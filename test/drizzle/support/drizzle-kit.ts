import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keygatePgMigrationSql } from 'keygate/drizzle';

const ROOT = join(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'node_modules', 'drizzle-kit', 'bin.cjs');

/** Where drizzle-kit migrates: a PGlite folder, or a PostgreSQL URL with the schema of its journal. */
export type Target = { pglite: string } | { url: string; journalSchema: string };

/**
 * An application's Drizzle project in a temporary folder, as a team would write it: `schema.ts`
 * (given) exports its own table and keygate's tables from `keygate/drizzle`, `drizzle.config.ts`
 * (given) points drizzle-kit at it, and `customSql` fills the custom migration. `keygate` and
 * `drizzle-orm` are linked into its `node_modules`; `keygate` resolves to this repository's sources
 * (the `source` condition), as the tests import it.
 */
export class KitProject {
  readonly dir = mkdtempSync(join(tmpdir(), 'keygate-drizzle-'));

  constructor(
    schemaTs: string,
    configTs: string,
    private readonly customSql: () => string,
  ) {
    mkdirSync(join(this.dir, 'node_modules'));
    symlinkSync(ROOT, join(this.dir, 'node_modules', 'keygate'));
    symlinkSync(join(ROOT, 'node_modules', 'drizzle-orm'), join(this.dir, 'node_modules', 'drizzle-orm'));
    writeFileSync(join(this.dir, 'schema.ts'), schemaTs);
    writeFileSync(join(this.dir, 'drizzle.config.ts'), configTs);
  }

  /** Runs `drizzle-kit <args>` in the project; rejects with its output when it exits non-zero. */
  kit(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [BIN, ...args],
        { cwd: this.dir, env: { ...process.env, NODE_OPTIONS: '--conditions=source' }, timeout: 120_000 },
        (error, stdout, stderr) =>
          error
            ? reject(new Error(`drizzle-kit ${args.join(' ')}: ${error.message}\n${stdout}\n${stderr}`))
            : resolve(stdout),
      );
    });
  }

  /**
   * The steps of keygate's docs page: `drizzle-kit generate`, then `drizzle-kit generate --custom`
   * filled with keygate's migration SQL, then `drizzle-kit migrate`. Returns the migration files.
   */
  async generateAndMigrate(): Promise<string[]> {
    await this.kit('generate');
    await this.kit('generate', '--custom', '--name=keygate');
    const custom = this.migrations().find((file) => file.endsWith('_keygate.sql'));
    if (!custom) throw new Error(`drizzle-kit made no custom migration: ${this.migrations().join(', ')}`);
    writeFileSync(join(this.dir, 'drizzle', custom), this.customSql());
    await this.kit('migrate');
    return this.migrations();
  }

  migrations(): string[] {
    return readdirSync(join(this.dir, 'drizzle'))
      .filter((file) => file.endsWith('.sql'))
      .sort();
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The PostgreSQL project: keygatePgTables beside a `widgets` table, migrated on PGlite or PostgreSQL,
 * the custom migration filled with keygatePgMigrationSql.
 */
export class DrizzleProject extends KitProject {
  /**
   * @param keygateSchema the `schema` option of keygatePgTables, or undefined for the default (`public`)
   * @param appSchema the application's own pgSchema, or undefined for its table in `public`
   */
  constructor(keygateSchema: string | undefined, appSchema: string | undefined, target: Target) {
    const app = appSchema
      ? `export const app = pgSchema('${appSchema}');\nexport const widgets = app.table`
      : 'export const widgets = pgTable';
    const options = keygateSchema ? `{ schema: '${keygateSchema}' }` : '';
    const db =
      'pglite' in target
        ? `driver: 'pglite', dbCredentials: { url: ${JSON.stringify(target.pglite)} }`
        : `dbCredentials: { url: ${JSON.stringify(target.url)} }, migrations: { schema: '${target.journalSchema}' }`;
    super(
      `import { pgSchema, pgTable, text } from 'drizzle-orm/pg-core';
import { keygatePgTables } from 'keygate/drizzle';

${app}('widgets', { id: text('id').primaryKey(), ownerKeyId: text('owner_key_id').notNull() });

export const {
  keygateSchema, keygateMigrations, keygateKeys, keygateUsage, keygateKeyActivity, keygateUsedTokens,
  keygateAudit, keygateAuditRetention, keygateOutbox, keygateWebhookEndpoints, keygateWebhookDeliveries,
  keygateRateLimits, keygateCreditBalances, keygateCreditHolds, keygateCreditEntries,
} = keygatePgTables(${options});
`,
      `export default { dialect: 'postgresql', schema: './schema.ts', out: './drizzle', ${db} };\n`,
      () => keygatePgMigrationSql(keygateSchema ? { schema: keygateSchema } : {}),
    );
  }
}
