/**
 * Whether `text` holds a NUL character (U+0000). No id, account or name keygate writes holds one,
 * and PostgreSQL refuses one in a text parameter (an error, which would read as a store failure), so
 * the SQL core answers such a lookup "not found" (or "nothing matches") without asking the database.
 *
 * @example
 * if (holdsNul(id)) return null; // KeyNotFoundError for a write
 */
export function holdsNul(text: string): boolean {
  return typeof text === 'string' && text.includes('\u0000');
}
