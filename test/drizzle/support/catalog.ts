/** Runs one query: a pg Pool's or a PGlite's `query`. */
export type Query = (text: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/**
 * keygate's part of a schema as PostgreSQL's catalog describes it, with the schema's name replaced by
 * `S`: tables, columns (type, nullability, default, collation, identity), constraints, indexes,
 * triggers, functions, sequences and the versions recorded in `keygate_migrations`. Tables and
 * functions outside keygate's (`keygate_%`) are left out: an application's, drizzle-kit's journal.
 */
export async function catalogOf(query: Query, schema: string): Promise<Record<string, unknown>> {
  const named = (text: unknown) => String(text).replaceAll(`"${schema}".`, 'S.').replaceAll(`${schema}.`, 'S.');
  const rows = async (text: string) => (await query(text, [schema])).rows;
  const tables = await rows(
    `SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'keygate\\_%' ORDER BY tablename`,
  );
  const columns = await rows(
    `SELECT table_name, ordinal_position, column_name, data_type, udt_name, is_nullable, column_default,
        collation_name, character_maximum_length, numeric_precision, datetime_precision,
        is_identity, identity_generation, identity_start, identity_increment, identity_maximum,
        identity_minimum, identity_cycle, is_generated
      FROM information_schema.columns WHERE table_schema = $1 AND table_name LIKE 'keygate\\_%'
      ORDER BY table_name, ordinal_position`,
  );
  const constraints = await rows(
    `SELECT c.relname AS table_name, k.conname, k.contype, pg_get_constraintdef(k.oid) AS definition,
        k.condeferrable, k.convalidated
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname LIKE 'keygate\\_%' ORDER BY c.relname, k.conname`,
  );
  const indexes = await rows(
    `SELECT tablename, indexname, indexdef FROM pg_indexes
      WHERE schemaname = $1 AND tablename LIKE 'keygate\\_%' ORDER BY tablename, indexname`,
  );
  const triggers = await rows(
    `SELECT c.relname AS table_name, t.tgname, pg_get_triggerdef(t.oid) AS definition, t.tgenabled
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY c.relname, t.tgname`,
  );
  const functions = await rows(
    `SELECT p.proname, pg_get_function_arguments(p.oid) AS arguments, pg_get_function_result(p.oid) AS result,
        l.lanname, p.prosrc, p.provolatile, p.prosecdef
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
      WHERE n.nspname = $1 ORDER BY p.proname`,
  );
  const sequences = await rows(
    `SELECT sequencename, data_type::text, start_value, min_value, max_value, increment_by, cycle, cache_size
      FROM pg_sequences WHERE schemaname = $1 ORDER BY sequencename`,
  );
  const hasVersions = tables.some((t) => t.tablename === 'keygate_migrations');
  const versions = hasVersions
    ? (await query(`SELECT version FROM "${schema}".keygate_migrations ORDER BY version`)).rows.map((r) => r.version)
    : [];
  return {
    tables: tables.map((t) => t.tablename),
    columns: columns.map((c) => ({ ...c, column_default: c.column_default === null ? null : named(c.column_default) })),
    constraints: constraints.map((c) => ({ ...c, definition: named(c.definition) })),
    indexes: indexes.map((i) => ({ ...i, indexdef: named(i.indexdef) })),
    triggers: triggers.map((t) => ({ ...t, definition: named(t.definition) })),
    // The credit ledger's functions name their tables with the schema.
    functions: functions.map((f) => ({ ...f, prosrc: named(f.prosrc) })),
    sequences,
    versions,
  };
}
