import { generateSQLiteDrizzleJson, generateSQLiteMigration } from 'drizzle-kit/api';
import { keygateSqliteMigrationSql, keygateSqliteTables } from 'keygate/drizzle';
import { KitProject } from './drizzle-kit.js';

/** The statements drizzle-kit's generator makes from keygateSqliteTables, then keygate's custom migration. */
export async function sqliteStatementsOfDrizzleKit(): Promise<string[]> {
  const generated = await generateSQLiteMigration(
    await generateSQLiteDrizzleJson({}),
    await generateSQLiteDrizzleJson(keygateSqliteTables()),
  );
  return [...generated, ...keygateSqliteMigrationSql().split('--> statement-breakpoint')];
}

/** An application's SQLite Drizzle project: keygateSqliteTables beside a `widgets` table, migrated into `file`. */
export class SqliteDrizzleProject extends KitProject {
  constructor(file: string) {
    super(
      `import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { keygateSqliteTables } from 'keygate/drizzle';

export const widgets = sqliteTable('widgets', { id: text('id').primaryKey(), ownerKeyId: text('owner_key_id').notNull() });

export const {
  keygateMigrations, keygateKeys, keygateUsage, keygateKeyActivity, keygateChanges, keygateUsedTokens,
  keygateAudit, keygateAuditRetention, keygateOutbox, keygateWebhookEndpoints, keygateWebhookDeliveries,
  keygateRateLimits, keygateCreditBalances, keygateCreditHolds, keygateCreditEntries,
} = keygateSqliteTables();
`,
      `export default { dialect: 'sqlite', schema: './schema.ts', out: './drizzle', dbCredentials: { url: ${JSON.stringify(file)} } };\n`,
      () => keygateSqliteMigrationSql(),
    );
  }
}
