import { InvalidInputError } from '#errors';
import { keyHint, parseKey } from '../key/format.js';
import { hashKey } from '../key/hash.js';
import type { KeyMetadata, KeyMode, KeyRateLimit } from '../types.js';
import { validMode } from '../validate/fields.js';

/**
 * The digest of a key kept by another system, as `KeyManager.import` takes it.
 *
 * @example
 * const digest: KeyDigest = { algorithm: 'sha256', hex: row.sha256 };
 */
export interface KeyDigest {
  /** `'sha256'` (keygate without a pepper) or `'hmac-sha256'` (with one); must match the manager's pepper setting. */
  algorithm: 'sha256' | 'hmac-sha256';
  /** The 64 hex characters of the digest of the whole key (any letter case). */
  hex: string;
}

/**
 * The fields of a key every import gives, as `create` takes them.
 *
 * @example
 * const fields: ImportKeyFields = { accountId: 'acct_1', name: 'legacy', permissions: ['email:verify'] };
 */
export interface ImportKeyFields {
  accountId: string;
  name: string;
  /** @default [] */
  permissions?: readonly string[];
  /** IPv4/IPv6 addresses and CIDR ranges. @default [] (any address) */
  allowedIps?: readonly string[];
  /** When the key stops working: a `Date` or ISO-8601 string. @default null (never) */
  expiresAt?: Date | string | null;
  /** @default {} */
  metadata?: KeyMetadata;
  /** The key's own rate limit, e.g. `{ limit: 100, windowMs: 60_000 }`. @default null (none of its own) */
  rateLimit?: KeyRateLimit | null;
}

/**
 * Import from the raw key: checked against the manager's prefix, mode taken from it, hashed, never stored.
 *
 * @example
 * await keys.import({ accountId: 'acct_1', name: 'legacy', secret: process.env.LEGACY_KEY ?? '' });
 */
export interface ImportFromSecret extends ImportKeyFields {
  secret: string;
  digest?: undefined;
  hint?: undefined;
  mode?: undefined;
}

/**
 * Import from the digest another system kept, with the key's display hint and mode.
 *
 * @example
 * await keys.import({ accountId: 'acct_1', name: 'migrated', mode: 'live', hint: 'mk_live_…Xy9Z', digest });
 */
export interface ImportFromDigest extends ImportKeyFields {
  digest: KeyDigest;
  /** The key's hint as `keyHint` makes it: `<prefix>_<mode>_…` and the key's last four characters. */
  hint: string;
  mode: KeyMode;
  secret?: undefined;
}

/**
 * Input of `KeyManager.import`: an existing key, by its raw value or by its digest.
 *
 * @example
 * const input: ImportKeyInput = { accountId: 'acct_1', name: 'legacy', secret };
 */
export type ImportKeyInput = ImportFromSecret | ImportFromDigest;

/** What an imported key contributes to its record. */
export interface ImportedKey {
  readonly hash: string;
  readonly hint: string;
  readonly mode: KeyMode;
}

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

function refuseAlongside(input: ImportKeyInput, fields: readonly ('digest' | 'hint' | 'mode')[], why: string): void {
  for (const field of fields) if (input[field] !== undefined) throw new InvalidInputError(field, why);
}

async function fromSecret(secret: unknown, prefix: string, pepper: string | undefined): Promise<ImportedKey> {
  // Never quoted: the value may be a real key with a typo in it.
  const parsed = parseKey(secret, prefix);
  if (parsed === null) {
    throw new InvalidInputError('secret', `secret is not a well-formed key with prefix "${prefix}"`);
  }
  // A parsed key is a string: parseKey answers null for anything else.
  const key = secret as string;
  return { hash: await hashKey(key, pepper), hint: keyHint(key), mode: parsed.mode };
}

function validDigest(digest: unknown, pepper: string | undefined): string {
  const d = digest as Partial<KeyDigest> | null;
  if (d === null || typeof d !== 'object') {
    throw new InvalidInputError('digest', 'digest must be an object { algorithm, hex }');
  }
  const expected = pepper === undefined ? 'sha256' : 'hmac-sha256';
  if (d.algorithm !== expected) {
    throw new InvalidInputError(
      'digest.algorithm',
      `digest.algorithm must be "${expected}" for this manager's pepper setting`,
    );
  }
  if (typeof d.hex !== 'string' || !HEX_DIGEST.test(d.hex)) {
    throw new InvalidInputError('digest.hex', 'digest.hex must be 64 hexadecimal characters');
  }
  return d.hex.toLowerCase();
}

function validHint(hint: unknown, prefix: string, mode: KeyMode): string {
  const shape = new RegExp(`^${prefix}_${mode}_…[0-9A-Za-z]{4}$`);
  if (typeof hint !== 'string' || !shape.test(hint)) {
    throw new InvalidInputError('hint', `hint must be "${prefix}_${mode}_…" and the key's last four characters`);
  }
  return hint;
}

/**
 * The digest, hint and mode of a key to import, validated against the manager's prefix and pepper.
 * Throws `InvalidInputError` naming the field at fault; never puts a secret into a message.
 */
export async function importedKey(
  input: ImportKeyInput,
  prefix: string,
  pepper: string | undefined,
): Promise<ImportedKey> {
  if (input.secret !== undefined) {
    refuseAlongside(input, ['digest', 'hint', 'mode'], 'give either secret, or digest with hint and mode');
    return fromSecret(input.secret, prefix, pepper);
  }
  if (input.digest === undefined) {
    throw new InvalidInputError('secret', 'give either secret, or digest with hint and mode');
  }
  const hash = validDigest(input.digest, pepper);
  const mode = validMode(input.mode);
  return { hash, hint: validHint(input.hint, prefix, mode), mode };
}
