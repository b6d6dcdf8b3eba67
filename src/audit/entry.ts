import type { InputIssueReason } from '#errors';
import { InvalidInputError } from '#errors';
import { describeValue, quote } from '../redact/describe.js';
import { looksLikeKey } from '../redact/keys.js';
import { validAccountId } from '../validate/fields.js';
import { checkOptionNames } from '../validate/options.js';
import { textIssue } from '../validate/text.js';
import { validWholeNumber } from '../validate/whole.js';
import type {
  AuditAction,
  AuditActor,
  AuditChanges,
  AuditContext,
  AuditEntry,
  AuditEntryInput,
} from '../vocabulary/audit-log.js';
import { auditId } from './id.js';

// The one place that decides what an audit entry may hold. Every backend's `append` runs it first, so
// no backend can store a secret: a field named like one is refused, a secret-shaped value redacted.

/**
 * Every {@link AuditAction}, in the order the type declares them (the key-management guide's "Audit log"
 * lists them in the same order).
 *
 * @example
 * AUDIT_ACTIONS.includes('key.revoked') // true
 */
export const AUDIT_ACTIONS: readonly AuditAction[] = Object.freeze([
  'key.created',
  'key.updated',
  'key.rotated',
  'key.suspended',
  'key.resumed',
  'key.revoked',
  'key.imported',
  'key.leaked',
  'credits.topped_up',
  'dashboard.signed_in',
]);

const ACTOR_TYPES: readonly AuditActor['type'][] = ['dashboard', 'cli', 'api'];

/** What replaces a secret-shaped value inside `changes`. */
export const REDACTED = '[redacted]';

// A field that holds, or may hold, a secret: refused as a change, redacted inside a value.
const SECRET_NAME = /secret|hash|digest|pepper|password|token|credential|private/i;
// A SHA-256 or HMAC digest in hex, as stores keep them.
const HEX_DIGEST = /^[0-9a-f]{64}$/i;
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_.]{0,63}$/;
const ENTRY_FIELDS = ['at', 'accountId', 'keyId', 'action', 'actor', 'changes', 'address'];
const QUERY_FIELDS = ['accountId', 'keyId', 'limit', 'before'];
const CONTEXT_FIELDS = ['actor', 'address'];
// The largest `changes`, serialised: a key's metadata (8 KiB) before and after, with room to spare.
const MAX_CHANGES_JSON = 65_536;
const MAX_DEPTH = 20;
const ID_TEXT = /^[A-Za-z0-9_-]{1,100}$/;

function refuse(field: string, reason: InputIssueReason, message: string): never {
  throw new InvalidInputError(field, message, { reason });
}

function text(field: string, value: unknown, max: number): string {
  const problem = textIssue(field, value, max);
  if (problem) refuse(problem.field, problem.reason, problem.message);
  // Never quoted: the value may be a key pasted into the wrong field.
  if (looksLikeKey(value as string)) refuse(field, 'key_shaped', `${field} looks like an API key; it is not stored`);
  return (value as string).trim();
}

function plainObject(field: string, value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    refuse(field, 'wrong_type', `${field} must be an object, got ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}

function validAt(value: unknown): string {
  const ms = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) refuse('at', 'unparseable', `at must be an ISO 8601 date and time, got ${quote(value)}`);
  return new Date(ms).toISOString();
}

function validAction(value: unknown): AuditAction {
  if (!AUDIT_ACTIONS.includes(value as AuditAction)) {
    refuse('action', 'not_allowed', `action must be one of ${AUDIT_ACTIONS.join(', ')}, got ${quote(value)}`);
  }
  return value as AuditAction;
}

/**
 * An actor as an audit entry keeps it: `type` one of `dashboard`, `cli`, `api`; `id` absent or 1-200
 * characters. Anything else throws `InvalidInputError` naming `actor.type` or `actor.id`.
 *
 * @example
 * validAuditActor({ type: 'cli', id: 'alice' }) // { type: 'cli', id: 'alice' }
 */
export function validAuditActor(value: unknown): AuditActor {
  const actor = plainObject('actor', value);
  checkOptionNames(actor, ['type', 'id'], 'an audit actor', 'actor');
  if (!ACTOR_TYPES.includes(actor.type as AuditActor['type'])) {
    refuse(
      'actor.type',
      'not_allowed',
      `actor.type must be one of ${ACTOR_TYPES.join(', ')}, got ${quote(actor.type)}`,
    );
  }
  const type = actor.type as AuditActor['type'];
  return Object.freeze(actor.id === undefined ? { type } : { type, id: text('actor.id', actor.id, 200) });
}

function validAddress(value: unknown): string {
  return text('address', value, 100);
}

// A copy of a JSON value with every secret-shaped string and every member named like a secret
// replaced by REDACTED. Values that JSON cannot hold are refused.
function scrubbed(field: string, value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) refuse(field, 'too_long', `${field} is nested more than ${MAX_DEPTH} levels deep`);
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) refuse(field, 'wrong_type', `${field} holds a number JSON cannot hold`);
    return value;
  }
  if (typeof value === 'string') return looksLikeKey(value) || HEX_DIGEST.test(value) ? REDACTED : value;
  if (Array.isArray(value)) return value.map((item) => scrubbed(field, item, depth + 1));
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value)) {
      if (item === undefined) continue;
      out[name] = SECRET_NAME.test(name) ? REDACTED : scrubbed(field, item, depth + 1);
    }
    return out;
  }
  return refuse(field, 'wrong_type', `${field} must hold JSON values only, got ${describeValue(value)}`);
}

/**
 * A copy of a JSON value with every secret-shaped string (a key, a hex digest) and every member named
 * like a secret (`secret`, `hash`, `digest`, `token`, ...) replaced by `[redacted]`; a value JSON
 * cannot hold is an `InvalidInputError` naming `field`. What the audit log and the outbox store.
 *
 * @example
 * scrubSecrets('data', { keyId: 'key_1', hash: 'ab12…' }) // { keyId: 'key_1', hash: '[redacted]' }
 */
export function scrubSecrets(field: string, value: unknown): unknown {
  return scrubbed(field, value, 0);
}

function validChanges(value: unknown): AuditChanges {
  const changes = plainObject('changes', value);
  const out: Record<string, { before: unknown; after: unknown }> = {};
  for (const [name, change] of Object.entries(changes)) {
    const field = `changes.${name}`;
    if (!FIELD_NAME.test(name)) {
      refuse('changes', 'bad_character', `changes names a field ${quote(name)}; names are letters, digits, _ and .`);
    }
    // A secret, a digest or a hash never enters the log, not even as "changed".
    if (SECRET_NAME.test(name)) refuse(field, 'not_allowed', `${field}: a secret, digest or hash is never audited`);
    const pair = plainObject(field, change);
    const names = Object.keys(pair);
    if (!('before' in pair) || !('after' in pair) || names.length !== 2) {
      refuse(field, 'wrong_type', `${field} must be { before, after }`);
    }
    out[name] = { before: scrubbed(field, pair.before ?? null, 0), after: scrubbed(field, pair.after ?? null, 0) };
  }
  if (JSON.stringify(out).length > MAX_CHANGES_JSON) {
    refuse('changes', 'too_long', `changes is larger than ${MAX_CHANGES_JSON / 1024} KiB once serialised`);
  }
  return out;
}

/**
 * An entry checked and cleaned as every audit log stores it: `at` an ISO 8601 date and time (kept in
 * `toISOString` form), `accountId` and `keyId` as keys have them, `action` an {@link AuditAction},
 * `actor` a `{ type, id? }` (see `validAuditActor`), `address` 1-100 characters, `changes` `{ field: { before,
 * after } }` of JSON values (64 KiB at most). No secret gets through: a change of a field named like
 * one (`secret`, `hash`, `digest`, `pepper`, `password`, `token`, ...) is refused, and inside the
 * values any member named like one, any string shaped like an API key and any 64-hex digest becomes
 * `'[redacted]'`; an id or address shaped like a key is refused. A bad entry throws
 * `InvalidInputError` naming the field (`changes.hash`, `actor.type`, ...). The result is deeply frozen.
 *
 * @example
 * const entry = validAuditEntry({ at: new Date().toISOString(), accountId: 'acct_1', action: 'key.revoked',
 *   keyId: 'key_1', actor: { type: 'api' }, changes: { status: { before: 'active', after: 'revoked' } } });
 */
export function validAuditEntry(input: unknown): AuditEntryInput {
  const entry = plainObject('entry', input);
  checkOptionNames(entry, ENTRY_FIELDS, 'an audit entry');
  const out: { -readonly [K in keyof AuditEntryInput]: AuditEntryInput[K] } = {
    at: validAt(entry.at),
    accountId: validAccountId(entry.accountId),
    action: validAction(entry.action),
    actor: validAuditActor(entry.actor),
  };
  if (entry.keyId !== undefined) out.keyId = text('keyId', entry.keyId, 512);
  if (entry.changes !== undefined) out.changes = validChanges(entry.changes);
  if (entry.address !== undefined) out.address = validAddress(entry.address);
  return deepFreeze(out);
}

/**
 * The actor and address of a management call, checked before anything is written; the actor
 * defaults to `{ type: 'api' }`. Throws `InvalidInputError` naming `actor.type`, `actor.id`,
 * `address`, or a member that is neither these nor one of `others` (reason `unknown_option`, with
 * "did you mean" the nearest; `where` names the call in the message).
 *
 * @example
 * validAuditContext(undefined) // { actor: { type: 'api' } }
 * validAuditContext({ grace: 0 }, ['graceMs'], 'KeyManager.rotate') // throws: did you mean `graceMs`?
 */
export function validAuditContext(
  value: unknown,
  others: readonly string[] = [],
  where = 'this call',
): Required<Pick<AuditContext, 'actor'>> & AuditContext {
  if (value === undefined) return { actor: { type: 'api' } };
  const context = plainObject('options', value);
  checkOptionNames(context, others.length === 0 ? CONTEXT_FIELDS : [...CONTEXT_FIELDS, ...others], where);
  const actor = context.actor === undefined ? { type: 'api' as const } : validAuditActor(context.actor);
  return context.address === undefined || context.address === null
    ? { actor }
    : { actor, address: validAddress(context.address) };
}

/**
 * The checked {@link AuditQuery}: `limit` 1-1,000 (default 50), `before` and `keyId` ids.
 *
 * @example
 * const { accountId, keyId, limit, before } = validAuditQuery({ accountId: 'acct_1' }); // limit 50
 */
export function validAuditQuery(value: unknown): {
  accountId: string;
  keyId: string | undefined;
  limit: number;
  before: string | undefined;
} {
  const query = plainObject('query', value);
  checkOptionNames(query, QUERY_FIELDS, 'an audit query');
  const { limit, before, keyId } = query;
  if (limit !== undefined) validWholeNumber('limit', limit, 1, 1000);
  if (before !== undefined && (typeof before !== 'string' || !ID_TEXT.test(before))) {
    refuse('before', 'wrong_type', `before must be an audit entry id, got ${describeValue(before)}`);
  }
  return {
    accountId: validAccountId(query.accountId),
    keyId: keyId === undefined ? undefined : text('keyId', keyId, 512),
    limit: (limit as number | undefined) ?? 50,
    before: before as string | undefined,
  };
}

/**
 * `entry` with `id`, deeply frozen: what a log returns, so that nobody can change a stored entry
 * through it.
 *
 * @example
 * return freezeAuditEntry(id, validAuditEntry(input));
 */
export function freezeAuditEntry(id: string, entry: AuditEntryInput): AuditEntry {
  return deepFreeze({ id, ...entry });
}

/**
 * A new entry as a log stores it: `input` checked and cleaned by {@link validAuditEntry}, with a new
 * {@link auditId}, deeply frozen. What `KeyManager` hands with a key write (`WriteOptions.audit`).
 *
 * @example
 * const entry = auditEntryOf({ at, accountId: 'acct_1', keyId: 'key_1', action: 'key.revoked', actor: { type: 'api' } });
 */
export function auditEntryOf(input: AuditEntryInput): AuditEntry {
  return freezeAuditEntry(auditId(), validAuditEntry(input));
}

/**
 * The entries a key write carries (`WriteOptions.audit`), checked again as `append` checks one (see
 * {@link validAuditEntry}; `id` 1-100 characters of `A-Z a-z 0-9 _ -`, as {@link auditId} makes them):
 * what a store that writes entries in its writes calls before it writes anything, so no caller can
 * put a secret in the log past the check. `undefined` is no entries. Throws `InvalidInputError`
 * naming the field of the first bad entry (`audit`, `audit.id`, `changes.hash`, ...).
 *
 * @example
 * const entries = validAuditEntries(options?.audit); // before the transaction begins
 */
export function validAuditEntries(value: unknown): readonly AuditEntry[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    refuse('audit', 'wrong_type', `audit must be a list of entries, got ${describeValue(value)}`);
  return (value as unknown[]).map((item) => {
    const { id, ...input } = plainObject('audit', item);
    if (typeof id !== 'string' || !ID_TEXT.test(id))
      refuse('audit.id', 'wrong_type', 'an audit entry needs its id (auditId())');
    return freezeAuditEntry(id, validAuditEntry(input));
  });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
