// Statements in the SQL core are written with `?` placeholders; PostgreSQL numbers its own.
const numberedTexts = new Map<string, string>();

/**
 * A statement's `?` placeholders as PostgreSQL's `$1, $2, ...`, in order. The core's statements never
 * hold a `?` inside a literal or an operator, so every `?` is a placeholder. Texts are few and fixed:
 * each is rewritten once.
 *
 * @example
 * numbered('SELECT * FROM t WHERE a = ? AND b = ?') // 'SELECT * FROM t WHERE a = $1 AND b = $2'
 */
export function numbered(sql: string): string {
  let text = numberedTexts.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    if (numberedTexts.size < 1_000) numberedTexts.set(sql, text);
  }
  return text;
}
