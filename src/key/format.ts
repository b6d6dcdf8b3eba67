import { InvalidInputError } from '#errors';
import { describeChoice, quote } from '../redact/describe.js';
import type { KeyMode } from '../types.js';
import { checkOptionNames } from '../validate/options.js';
import { base62Digit, encodeBase62, randomBase62 } from './base62.js';
import { CRC32_START, crc32, crc32Final, crc32Step, crc32Update } from './crc32.js';

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
  /** Key prefix: 1-16 lower-case ASCII letters and digits, starting with a letter. @default 'mk' */
  prefix?: string;
  /** @default 'test' */
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
  checkOptionNames(options, ['prefix', 'mode'], 'generateKey');
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const mode = options.mode ?? 'test';
  assertPrefix(prefix);
  if (mode !== 'live' && mode !== 'test') {
    throw new InvalidInputError('mode', `mode must be "live" or "test", got ${describeChoice(mode)}`);
  }
  const body = `${prefix}_${mode}_${randomBase62(RANDOM_LENGTH)}`;
  return body + checksumOf(body);
}

/**
 * Splits a raw key into its parts, or returns `null` when it is not a well-formed key with that prefix:
 * wrong length, prefix or mode, a character outside base62, or a checksum that does not match
 * (typos, truncations, two keys in one header). Never throws for a value; does no I/O. A `prefix`
 * that `generateKey` would refuse (1-16 lower-case ASCII letters and digits, starting with a letter)
 * throws `InvalidInputError` naming `prefix`.
 *
 * @example
 * parseKey('mk_test_...')?.mode // 'test'
 * parseKey('hello')             // null
 */
export function parseKey(value: unknown, prefix: string = DEFAULT_PREFIX): ParsedKey | null {
  if (!isWellFormedKey(value, prefix)) return null;
  const split = value.length - CHECKSUM_LENGTH;
  return {
    prefix,
    mode: value.charCodeAt(prefix.length + 1) === 108 /* l */ ? 'live' : 'test',
    random: value.slice(prefix.length + 6, split),
    checksum: value.slice(split),
  };
}

// The CRC-32 registers after `<prefix>_live_` and `<prefix>_test_`, for the last prefix seen: keys are
// checked against one prefix over and over, so the head of every key is hashed (and the prefix
// validated) once, not per request.
interface Heads {
  readonly prefix: string;
  readonly live: number;
  readonly test: number;
}
let lastHeads: Heads | undefined;

function headsOf(prefix: string): Heads {
  if (lastHeads !== undefined && lastHeads.prefix === prefix) return lastHeads;
  assertPrefix(prefix);
  lastHeads = {
    prefix,
    live: crc32Update(CRC32_START, `${prefix}_live_`, 0, prefix.length + 6),
    test: crc32Update(CRC32_START, `${prefix}_test_`, 0, prefix.length + 6),
  };
  return lastHeads;
}

// 'live_' and 'test_' after the prefix's '_', compared by character code (no builtin call).
function modeAt(value: string, at: number): 'live' | 'test' | null {
  const c0 = value.charCodeAt(at);
  const rest =
    value.charCodeAt(at + 1) * 0x1000000 +
    value.charCodeAt(at + 2) * 0x10000 +
    value.charCodeAt(at + 3) * 0x100 +
    value.charCodeAt(at + 4);
  if (c0 === 108 /* l */ && rest === 0x6976655f /* 'ive_' */) return 'live';
  if (c0 === 116 /* t */ && rest === 0x6573745f /* 'est_' */) return 'test';
  return null;
}

/**
 * Whether `value` is a well-formed key with that prefix: {@link parseKey} without building the parts.
 * Allocates nothing, so a flood of bad keys costs no garbage; this is the check on the request path.
 * Like `parseKey`, throws `InvalidInputError` naming `prefix` for a prefix `generateKey` would refuse.
 *
 * @example
 * isWellFormedKey(generateKey()) // true
 * isWellFormedKey('mk_live_x')   // false
 */
export function isWellFormedKey(value: unknown, prefix: string = DEFAULT_PREFIX): value is string {
  const heads = headsOf(prefix);
  if (typeof value !== 'string') return false;
  const head = prefix.length + 6; // '<prefix>_live_'
  const split = head + RANDOM_LENGTH;
  if (value.length !== split + CHECKSUM_LENGTH) return false;
  for (let i = 0; i < prefix.length; i++) {
    if (value.charCodeAt(i) !== prefix.charCodeAt(i)) return false;
  }
  if (value.charCodeAt(prefix.length) !== 95 /* _ */) return false;
  const mode = modeAt(value, prefix.length + 1);
  if (mode === null) return false;
  // The checksum is the CRC-32 in base62, most significant digit first, padded to 6 digits.
  let checksum = 0;
  for (let i = split; i < value.length; i++) {
    const d = base62Digit(value.charCodeAt(i));
    if (d < 0) return false;
    checksum = checksum * 62 + d;
  }
  // One pass over the random part: the CRC-32 and the alphabet together. `(c | 32) - 97` folds upper
  // case onto lower case, so each test is one unsigned comparison.
  let register = mode === 'live' ? heads.live : heads.test;
  let outside = 0;
  for (let i = head; i < split; i++) {
    const c = value.charCodeAt(i);
    outside |= (c - 48) >>> 0 < 10 || ((c | 32) - 97) >>> 0 < 26 ? 0 : 1;
    register = crc32Step(register, c);
  }
  return outside === 0 && checksum === crc32Final(register);
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
