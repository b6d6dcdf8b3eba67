// The audit log's statements (table `keygate_audit` in ./migrations.ts).

/** The columns of `keygate_audit`. */
export const AUDIT_COLUMNS = 'id, at, account_id, key_id, action, actor_type, actor_id, changes, address';

/** The audit log's statements. */
export const AUDIT_SQL = {
  /** The nine columns, in `AUDIT_COLUMNS` order. */
  append: `INSERT INTO keygate_audit (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  /**
   * A page of an account's entries, newest first: ? account, then ? key id (when `byKey`), then ?
   * before id (when `before`), then ? limit. Ids sort by time as bytes (SQLite's BINARY collation).
   */
  list: (byKey: boolean, before: boolean) =>
    `SELECT ${AUDIT_COLUMNS} FROM keygate_audit WHERE account_id = ?${byKey ? ' AND key_id = ?' : ''}${
      before ? ' AND id < ?' : ''
    } ORDER BY id DESC LIMIT ?`,
} as const;
