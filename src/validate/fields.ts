import type { InputIssue, InputIssueReason } from '#errors';
import { describeChoice, describeValue, quote } from '../redact/describe.js';
import { looksLikeKey } from '../redact/keys.js';
import type { KeyMetadata, KeyMode } from '../types.js';
import { issue, refusal, refuse } from './issues.js';
import { textIssue } from './text.js';

// Write-time validation: every check a management call needs, each naming its field and giving a
// stable reason (`InputIssueReason`); a list reports every bad entry, each with its index.

/**
 * The most permissions a key holds: 100. A key that needs more wants a wildcard (`email:*`).
 *
 * @example
 * validPermissions(Array.from({ length: 101 }, (_, i) => `p:${i}`)) // throws, reason 'too_many'
 */
export const MAX_PERMISSIONS = 100;

/** The longest permission name, in characters: 128. */
export const MAX_PERMISSION_LENGTH = 128;

const PERMISSION = /^[A-Za-z0-9_.:*/-]+$/;

function text(field: string, value: unknown, max: number): string {
  const problem = textIssue(field, value, max);
  if (problem) throw refusal([problem]);
  return (value as string).trim();
}

/**
 * A key's account id: 1-200 characters once trimmed, at least one of them visible, and no control,
 * bidirectional-override or line-separator character (see `textIssue`).
 */
export function validAccountId(value: unknown): string {
  return text('accountId', value, 200);
}

/**
 * A key's name: 1-200 characters, trimmed, at least one of them visible, and no control,
 * bidirectional-override or line-separator character. Accents, CJK and emoji are names like any other.
 */
export function validName(value: unknown): string {
  return text('name', value, 200);
}

/** `'live'` or `'test'`. A refused value is described (type and length), never quoted: it may be a pasted key. */
export function validMode(value: unknown): KeyMode {
  if (value !== 'live' && value !== 'test') {
    refuse('mode', 'not_allowed', `mode must be "live" or "test", got ${describeChoice(value)}`);
  }
  return value;
}

// Why entry `i` cannot be a permission name, or undefined when it can.
function permissionIssue(p: unknown, i: number): InputIssue | undefined {
  // A key pasted here would be stored in the record and shown wherever it is listed.
  if (typeof p === 'string' && looksLikeKey(p)) {
    return issue(
      'permissions',
      'key_shaped',
      `permissions[${i}] looks like an API key, not a permission name such as "email:verify" (${describeValue(p)}, not repeated here)`,
      i,
    );
  }
  const reason: InputIssueReason | undefined =
    typeof p !== 'string'
      ? 'wrong_type'
      : p === ''
        ? 'empty'
        : p.length > MAX_PERMISSION_LENGTH
          ? 'too_long'
          : PERMISSION.test(p)
            ? undefined
            : 'bad_character';
  if (reason === undefined) return undefined;
  const rule = `1-${MAX_PERMISSION_LENGTH} characters of letters, digits and _ . : * / -`;
  return issue('permissions', reason, `permission ${quote(p)} must be ${rule}`, i);
}

/**
 * Permission names such as `email:verify`: at most {@link MAX_PERMISSIONS} (100) entries, each 1-128 of
 * `A-Z a-z 0-9 _ . : * / -`, duplicates removed. A value shaped like an API key (or its 32 random
 * characters) is refused without being repeated. Every bad entry is reported, with its index.
 *
 * @example
 * validPermissions(['email:verify', 'email:verify']) // ['email:verify']
 */
export function validPermissions(value: unknown): string[] {
  if (!Array.isArray(value)) refuse('permissions', 'wrong_type', 'permissions must be an array of strings');
  if (value.length > MAX_PERMISSIONS) {
    refuse(
      'permissions',
      'too_many',
      `permissions has ${value.length} entries; a key holds at most ${MAX_PERMISSIONS} (a wildcard such as "email:*" covers many)`,
    );
  }
  const issues: InputIssue[] = [];
  value.forEach((p, i) => {
    const problem = permissionIssue(p, i);
    if (problem) issues.push(problem);
  });
  if (issues.length > 0) throw refusal(issues);
  return [...new Set<string>(value)];
}

/** An expiry: a `Date`, an ISO-8601 string or `null` (never); must lie after `now`. Returns ISO text or null. */
export function validExpiry(value: unknown, nowMs: number): string | null {
  if (value === null || value === undefined) return null;
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) {
    const reason = value instanceof Date || typeof value === 'string' ? 'unparseable' : 'wrong_type';
    refuse('expiresAt', reason, 'expiresAt must be a Date, an ISO-8601 date string or null');
  }
  if (ms <= nowMs) refuse('expiresAt', 'out_of_range', 'expiresAt must lie in the future');
  return new Date(ms).toISOString();
}

/** A duration in milliseconds: a number >= 0 (`Infinity` allowed). */
export function validDuration(field: string, value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0)) {
    const reason = typeof value === 'number' ? 'out_of_range' : 'wrong_type';
    refuse(field, reason, `${field} must be a number of milliseconds >= 0, got ${describeChoice(value)}`);
  }
  return value;
}

/**
 * A rotation's grace in milliseconds: a finite number >= 0.
 *
 * @example
 * validGraceMs(3_600_000) // 3600000
 * validGraceMs(-1)        // throws InvalidInputError, field 'graceMs'
 */
export function validGraceMs(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    const reason = typeof value === 'number' ? 'out_of_range' : 'wrong_type';
    refuse('graceMs', reason, `graceMs must be a finite number of milliseconds >= 0, got ${describeChoice(value)}`);
  }
  return value;
}

/** The longest suspension reason, in characters: 500. */
export const MAX_REASON_LENGTH = 500;

/**
 * A suspension's reason, or `null` when none is given (`undefined` or `null`): 1-500 characters once
 * trimmed, at least one visible, no control, bidirectional-override or line-separator character, and
 * not shaped like an API key (it is shown wherever the key is).
 *
 * @example
 * validReason(' unpaid invoice ') // 'unpaid invoice'
 */
export function validReason(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const reason = text('reason', value, MAX_REASON_LENGTH);
  if (looksLikeKey(reason)) {
    refuse('reason', 'key_shaped', 'reason looks like an API key; a key must never be stored as text');
  }
  return reason;
}

/** Metadata: a plain JSON object of at most 8 KiB once serialised. */
export function validMetadata(value: unknown): KeyMetadata {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    refuse('metadata', 'wrong_type', 'metadata must be a plain object');
  }
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch {
    refuse('metadata', 'wrong_type', 'metadata must be JSON-serialisable');
  }
  if (json.length > 8192) refuse('metadata', 'too_long', 'metadata is larger than 8 KiB once serialised');
  return JSON.parse(json) as KeyMetadata;
}
