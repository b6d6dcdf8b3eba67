import { type InputIssue, InvalidInputError } from '#errors';
import { describeValue } from '../redact/describe.js';
import { issue } from './issues.js';

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
 * Why `options` cannot be an options object of `where`, as an issue, or `undefined` when it can: the
 * non-throwing form of {@link checkOptionNames} (same field, reason and message), for a check that
 * reports every issue at once (`KeyManager.check`). `undefined` passes. Allocates nothing for an
 * object whose members are all known, so a hot path may call it.
 *
 * @example
 * optionNameIssue({ allowIps: [] }, ['allowedIps'], 'KeyManager.create')
 * // { field: 'allowIps', reason: 'unknown_option', message: 'allowIps is not an option of KeyManager.create; did you mean `allowedIps`?' }
 */
export function optionNameIssue(
  options: unknown,
  known: readonly string[],
  where: string,
  path = '',
): InputIssue | undefined {
  if (options === undefined) return undefined;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    const field = path === '' ? 'options' : path;
    return issue(field, 'wrong_type', `${where} options must be an object, got ${describeValue(options)}`);
  }
  // `for...in` with an own-member test walks the names without building an array of them.
  for (const name in options) {
    if (!Object.hasOwn(options, name) || known.includes(name)) continue;
    const member = path === '' ? name : `${path}.${name}`;
    const near = closestName(name, known);
    const hint = near === undefined ? `; the options are ${known.join(', ')}` : `; did you mean \`${near}\`?`;
    return issue(member, 'unknown_option', `${member} is not an option of ${where}${hint}`);
  }
  return undefined;
}

/**
 * Refuses an options object that is not a plain object, or that has a member `known` does not
 * list: throws `InvalidInputError` with `field` the unknown member (prefixed with `path` and a dot
 * for a nested object, so `credits.leger`), one issue of reason `unknown_option`, and a message that
 * says "did you mean `credits`?" when a known name is within two edits. `undefined` passes (no
 * options). Call it where options are taken (a constructor, a resolver, a write), never per request:
 * a misspelt option must never leave a check off. `optionNameIssue` is its non-throwing form.
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
  const found = optionNameIssue(options, known, where, path);
  if (found) throw new InvalidInputError(found.field, found.message, { reason: found.reason });
}
