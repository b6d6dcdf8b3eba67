import type Database from 'better-sqlite3';

type Db = InstanceType<typeof Database>;
type Row = Record<string, unknown>;

/** SQL text compared by meaning: without quotes, case or spacing. */
const normal = (text: unknown) =>
  String(text ?? '')
    .replace(/["`]/g, '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([(),=<>])\s*/g, '$1')
    .trim()
    .toLowerCase();

/** The CHECK expressions of a CREATE TABLE statement (inline or table-level, named or not), normalized and sorted. */
function checksOf(createTable: string): string[] {
  const checks: string[] = [];
  const re = /\bCHECK\s*\(/gi;
  for (let m = re.exec(createTable); m; m = re.exec(createTable)) {
    let depth = 1;
    let i = m.index + m[0].length;
    const start = i;
    for (; i < createTable.length && depth > 0; i++) {
      if (createTable[i] === '(') depth++;
      if (createTable[i] === ')') depth--;
    }
    checks.push(normal(createTable.slice(start, i - 1)));
  }
  return checks.sort();
}

/**
 * keygate's part of a SQLite database as SQLite itself describes it: per table its columns
 * (`table_xinfo`: order, declared type, nullability, default, primary key), its CHECK expressions,
 * whether its primary key is AUTOINCREMENT and whether it is WITHOUT ROWID; per index its columns
 * (`index_xinfo`: order, direction, collation), uniqueness, origin and partial WHERE; the triggers'
 * normalized text; the versions in `keygate_migrations`. Tables outside `keygate_%` are left out.
 *
 * drizzle-kit writes its own CREATE TABLE text, so the text is compared in parts, not whole. Declared
 * types are compared upper-cased (drizzle-kit writes `text`, keygate `TEXT`: the same affinity). A
 * primary-key column counts as NOT NULL either way (`notNullOrPk`): drizzle-kit declares it, keygate's
 * DDL leaves it to the key. `withoutRowid` is reported apart, for the one table where they differ.
 */
export function sqliteCatalogOf(db: Db) {
  const tables = db
    .prepare(
      `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name LIKE 'keygate\\_%' ESCAPE '\\' ORDER BY name`,
    )
    .all() as { name: string; sql: string }[];
  const withoutRowid = tables.filter((t) => /\)\s*WITHOUT\s+ROWID\s*$/i.test(t.sql)).map((t) => t.name);
  const described = tables.map((t) => {
    const columns = (db.pragma(`table_xinfo(${t.name})`) as Row[]).map((c) => ({
      cid: c.cid,
      name: c.name,
      type: String(c.type).toUpperCase(),
      notNullOrPk: c.notnull === 1 || Number(c.pk) > 0,
      default: c.dflt_value,
      pk: c.pk,
      hidden: c.hidden,
    }));
    const indexes = (db.pragma(`index_list(${t.name})`) as Row[])
      .map((i) => {
        const sql = (
          db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`).get(i.name) as
            | { sql: string | null }
            | undefined
        )?.sql;
        const where = sql ? /\bWHERE\b(.*)$/is.exec(sql)?.[1] : undefined;
        return {
          name: String(i.name).startsWith('sqlite_autoindex_') ? '(primary key or unique)' : i.name,
          unique: i.unique,
          origin: i.origin,
          partial: i.partial,
          where: where === undefined ? null : normal(where),
          columns: (db.pragma(`index_xinfo(${i.name})`) as Row[])
            .filter((x) => x.key === 1)
            .map((x) => ({ seqno: x.seqno, cid: x.cid, name: x.name, desc: x.desc, coll: x.coll })),
        };
      })
      .sort((a, b) => String(a.name).localeCompare(String(b.name)));
    return {
      table: t.name,
      columns,
      checks: checksOf(t.sql),
      autoincrement: /\bAUTOINCREMENT\b/i.test(t.sql),
      indexes,
    };
  });
  const triggers = (
    db.prepare(`SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name`).all() as Row[]
  ).map((t) => ({ name: t.name, table: t.tbl_name, sql: normal(t.sql) }));
  const hasVersions = tables.some((t) => t.name === 'keygate_migrations');
  const versions = hasVersions
    ? (db.prepare('SELECT version FROM keygate_migrations ORDER BY version').all() as Row[]).map((r) => r.version)
    : [];
  return { tables: described, withoutRowid, triggers, versions };
}
