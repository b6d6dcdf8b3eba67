import { InvalidInputError, quote } from '../errors.js';
import type { KeyMode } from '../types.js';
import { encodeBase62, isBase62Code, randomBase62 } from './base62.js';
import { crc32 } from './crc32.js';

/** Characters of CSPRNG output in a key (base62, about 190 bits). */
export const RANDOM_LENGTH = 32;
/** Characters of base62 CRC-32 checksum at the end of a key. */
export const CHECKSUM_LENGTH = 6;
/** The prefix keys carry unless configured otherwise. */
export const DEFAULT_PREFIX = 'mk';

const PREFIX_PATTERN = /^[a-z][a-z0-9]{0,15}$/;

/** A key split into its parts. Returned by {@link parseKey}; holds the secret, so never log it. */
export interface ParsedKey {
  readonly prefix: string;
  readonly mode: KeyMode;
  /** The 32 random characters. */
  readonly random: string;
  readonly checksum: string;
}

/** Options of {@link generateKey}. */
export interface GenerateKeyOptions {
  /** Key prefix: 1-16 lower-case letters and digits, starting with a letter. Default `'mk'`. */
  prefix?: string;
  /** Default `'test'`. */
  mode?: KeyMode;
}

/**
 * Throws `InvalidInputError` naming `prefix` unless it is 1-16 lower-case letters and digits starting with a letter.
 *
 * @example
 * assertPrefix('mk') // ok
 */
export function assertPrefix(prefix: string): void {
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new InvalidInputError(
      'prefix',
      `prefix must be 1-16 lower-case letters and digits starting with a letter, got ${quote(prefix)}`,
    );
  }
}

function checksumOf(body: string): string {
  return encodeBase62(crc32(body), CHECKSUM_LENGTH);
}

/**
 * A new raw key: `<prefix>_<mode>_<32 random base62><6 base62 CRC-32 of everything before it>`.
 * Show it to its owner once; store only {@link hashKey} of it.
 *
 * @example
 * generateKey({ mode: 'live' }) // 'mk_live_' + 38 characters
 */
export function generateKey(options: GenerateKeyOptions = {}): string {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const mode = options.mode ?? 'test';
  assertPrefix(prefix);
  if (mode !== 'live' && mode !== 'test') {
    throw new InvalidInputError('mode', `mode must be "live" or "test", got ${quote(mode)}`);
  }
  const body = `${prefix}_${mode}_${randomBase62(RANDOM_LENGTH)}`;
  return body + checksumOf(body);
}

/**
 * Splits a raw key into its parts, or returns `null` when it is not a well-formed key with that prefix:
 * wrong length, prefix or mode, a character outside base62, or a checksum that does not match
 * (typos, truncations, two keys in one header). Never throws; does no I/O.
 *
 * @example
 * parseKey('mk_test_...')?.mode // 'test'
 * parseKey('hello')             // null
 */
export function parseKey(value: unknown, prefix: string = DEFAULT_PREFIX): ParsedKey | null {
  if (typeof value !== 'string') return null;
  const head = prefix.length + 6; // '<prefix>_live_'
  if (value.length !== head + RANDOM_LENGTH + CHECKSUM_LENGTH) return null;
  if (!value.startsWith(prefix) || value.charCodeAt(prefix.length) !== 95 /* _ */) return null;
  let mode: KeyMode;
  if (value.startsWith('live_', prefix.length + 1)) mode = 'live';
  else if (value.startsWith('test_', prefix.length + 1)) mode = 'test';
  else return null;
  for (let i = head; i < value.length; i++) {
    if (!isBase62Code(value.charCodeAt(i))) return null;
  }
  const split = value.length - CHECKSUM_LENGTH;
  const checksum = value.slice(split);
  if (checksumOf(value.slice(0, split)) !== checksum) return null;
  return { prefix, mode, random: value.slice(head, split), checksum };
}

/**
 * The display hint of a key, `mk_live_…Xy9Z`: prefix, mode and the last four characters.
 * Four checksum characters identify a key to its owner without helping anyone guess it.
 *
 * @example
 * keyHint(secret) // 'mk_live_…Xy9Z'
 */
export function keyHint(key: string): string {
  const modeEnd = key.indexOf('_', key.indexOf('_') + 1) + 1;
  return `${key.slice(0, modeEnd)}…${key.slice(-4)}`;
}
