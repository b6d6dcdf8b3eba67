import { InvalidInputError } from '../errors.js';
import { normalizeAllowList } from '../ip/allow-list.js';
import { looksLikeKey } from '../key/redact.js';
import { checkRateLimit } from '../rate-limit/policy.js';
import type { KeyMetadata, KeyMode, RateLimit } from '../types.js';
import { describeValue, quote } from './describe.js';

// Write-time validation: every check a management call needs, each naming its field.

const PERMISSION = /^[A-Za-z0-9_.:*/-]{1,128}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

function text(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidInputError(field, `${field} must be a non-empty string`);
  }
  if (value.length > max) throw new InvalidInputError(field, `${field} is longer than ${max} characters`);
  if (CONTROL.test(value)) throw new InvalidInputError(field, `${field} contains control characters`);
  return value.trim();
}

/** A key's account id: 1-200 characters, no control characters. */
export function validAccountId(value: unknown): string {
  return text('accountId', value, 200);
}

/** A key's name: 1-200 characters, no control characters, trimmed. */
export function validName(value: unknown): string {
  return text('name', value, 200);
}

/** `'live'` or `'test'`. A refused value is described (type and length), never quoted: it may be a pasted key. */
export function validMode(value: unknown): KeyMode {
  if (value !== 'live' && value !== 'test') {
    throw new InvalidInputError('mode', `mode must be "live" or "test", got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Permission names such as `email:verify`: 1-128 of `A-Z a-z 0-9 _ . : * / -`, duplicates removed. A value
 * shaped like an API key (or its 32 random characters) is refused without being repeated.
 */
export function validPermissions(value: unknown): string[] {
  if (!Array.isArray(value)) throw new InvalidInputError('permissions', 'permissions must be an array of strings');
  const out = new Set<string>();
  value.forEach((p, i) => {
    // A key pasted here would be stored in the record and shown wherever it is listed.
    if (typeof p === 'string' && looksLikeKey(p)) {
      throw new InvalidInputError(
        `permissions[${i}]`,
        `permissions[${i}] looks like an API key, not a permission name such as "email:verify" (${describeValue(p)}, not repeated here)`,
      );
    }
    if (typeof p !== 'string' || !PERMISSION.test(p)) {
      throw new InvalidInputError(
        `permissions[${i}]`,
        `permission ${quote(p)} must be 1-128 characters of letters, digits and _ . : * / -`,
      );
    }
    out.add(p);
  });
  return [...out];
}

/** Allow-list entries, strictly parsed and canonicalised. */
export function validAllowList(value: unknown): string[] {
  return normalizeAllowList(value, 'allowedIps');
}

/** An expiry: a `Date`, an ISO-8601 string or `null` (never); must lie after `now`. Returns ISO text or null. */
export function validExpiry(value: unknown, nowMs: number): string | null {
  if (value === null || value === undefined) return null;
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw new InvalidInputError('expiresAt', 'expiresAt must be a Date, an ISO-8601 date string or null');
  if (ms <= nowMs) throw new InvalidInputError('expiresAt', 'expiresAt must lie in the future');
  return new Date(ms).toISOString();
}

/** A duration in milliseconds: a number >= 0 (`Infinity` allowed). */
export function validDuration(field: string, value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0)) {
    throw new InvalidInputError(field, `${field} must be a number of milliseconds >= 0, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * A whole number >= 1 (a count, a size): anything else throws `InvalidInputError` naming `field`, with
 * the refused value described (its type and size), never quoted, since it may be a pasted secret.
 *
 * @example
 * validPositiveInteger('max', 10)  // 10
 * validPositiveInteger('max', 0.5) // throws InvalidInputError, field 'max': 'max must be a whole number >= 1, got 0.5'
 */
export function validPositiveInteger(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidInputError(field, `${field} must be a whole number >= 1, got ${describeValue(value)}`);
  }
  return value;
}

/** Metadata: a plain JSON object of at most 8 KiB once serialised. */
export function validMetadata(value: unknown): KeyMetadata {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError('metadata', 'metadata must be a plain object');
  }
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch {
    throw new InvalidInputError('metadata', 'metadata must be JSON-serialisable');
  }
  if (json.length > 8192) throw new InvalidInputError('metadata', 'metadata is larger than 8 KiB once serialised');
  return JSON.parse(json) as KeyMetadata;
}

/**
 * A key's own rate limit: `null` or absent for none, else exactly `{ limit, windowMs }` with `limit` a
 * whole number >= 1 and `windowMs` a number of milliseconds > 0 (at most 366 days). Errors name
 * `rateLimit`, `rateLimit.limit`, `rateLimit.windowMs` or the unknown member.
 */
export function validRateLimit(value: unknown): RateLimit | null {
  if (value === null || value === undefined) return null;
  const { limit, windowMs } = checkRateLimit(value, 'rateLimit', true);
  return { limit, windowMs };
}
