import { InvalidInputError } from '#errors';
import { describeValue } from '../redact/describe.js';

// The furthest a misspelt name may lie from a known one, in edits, for "did you mean" to name it.
const MAX_SUGGESTION_EDITS = 2;

// Edits between `a` and `b` (letters inserted, deleted or changed; case ignored): Levenshtein's distance.
function editsBetween(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let row = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const next = [i];
    for (let j = 1; j <= t.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[t.length]!;
}

/**
 * The known name a misspelt `name` most likely meant: the nearest one within two edits (a letter
 * added, dropped or changed; case ignored), or `undefined` when none is
 * that close. Ties go to the name listed first.
 *
 * @example
 * closestName('permisions', ['header', 'permissions']) // 'permissions'
 * closestName('ttl', ['ttlMs', 'timeoutMs'])           // 'ttlMs'
 * closestName('store', ['header'])                     // undefined
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestEdits = MAX_SUGGESTION_EDITS + 1;
  for (const candidate of known) {
    const edits = editsBetween(name, candidate);
    if (edits < bestEdits) {
      best = candidate;
      bestEdits = edits;
    }
  }
  return best;
}

/**
 * Refuses an options object that is not a plain object, or that has a member `known` does not
 * list: throws `InvalidInputError` with `field` the unknown member (prefixed with `path` and a dot
 * for a nested object, so `credits.leger`), one issue of reason `unknown_option`, and a message that
 * says "did you mean `credits`?" when a known name is within two edits. `undefined` passes (no
 * options). Call it where options are taken (a constructor, a resolver, a write), never per request:
 * a misspelt option must never leave a check off.
 *
 * @param options the object a caller passed
 * @param known every member the object may have
 * @param where what takes the options, for the message (`'apiKeyAuth'`, `'CachedKeyStore'`)
 * @param path the dotted path of a nested options object (`'credits'`), or `''` at the top
 * @example
 * checkOptionNames({ permission: ['admin'] }, ['header', 'permissions'], 'authenticate');
 * // throws InvalidInputError, field 'permission', reason 'unknown_option':
 * // 'permission is not an option of authenticate; did you mean `permissions`?'
 */
export function checkOptionNames(options: unknown, known: readonly string[], where: string, path = ''): void {
  if (options === undefined) return;
  const field = path === '' ? 'options' : path;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidInputError(field, `${where} options must be an object, got ${describeValue(options)}`, {
      reason: 'wrong_type',
    });
  }
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const member = path === '' ? name : `${path}.${name}`;
    const near = closestName(name, known);
    const hint = near === undefined ? `; the options are ${known.join(', ')}` : `; did you mean \`${near}\`?`;
    throw new InvalidInputError(member, `${member} is not an option of ${where}${hint}`, {
      reason: 'unknown_option',
    });
  }
}
