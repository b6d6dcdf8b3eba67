import { type InputIssue, InvalidInputError } from '#errors';
import { quote } from '../redact/describe.js';
import { attempt, refusal } from '../validate/issues.js';
import { formatIPv4, formatIPv6, parseAddress } from './parse.js';

// Allow lists are compiled once into sorted, merged numeric ranges; a request does one strict parse
// of its address and one binary search, so a 10,000-entry list costs a few more comparisons than a
// 1-entry list, not 10,000 of them.
//
// IPv4 entries and the part of any IPv6 entry inside ::ffff:0:0/96 (IPv4-mapped space) go to the IPv4
// table; an IPv4 client, written either way, is looked up there. Every other IPv6 address is looked
// up in the IPv6 table. Matching is therefore by bits, whatever the spelling.

/** One parsed allow-list entry. */
export interface ParsedEntry {
  /** 4 or 6. */
  readonly kind: 4 | 6;
  /** Network address: `[v4]` or four 32-bit words. */
  readonly words: readonly number[];
  readonly prefix: number;
  /** Canonical text, e.g. `203.0.113.0/24`, `2001:db8::/32`, `198.51.100.7`. */
  readonly canonical: string;
}

function prefixOf(text: string, max: number): number {
  if (!/^(0|[1-9][0-9]{0,2})$/.test(text)) return -1;
  const n = Number(text);
  return n <= max ? n : -1;
}

// The mask of word `i` (32 bits, big-endian) of a network whose prefix is `prefix` bits long.
function wordMask(i: number, prefix: number): number {
  const bits = Math.min(32, Math.max(0, prefix - i * 32));
  return bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

// The network words of an entry's address part: IPv4 as one word, IPv6 as four. An IPv4-mapped entry
// is kept as IPv6 so that its prefix keeps its IPv6 meaning.
function addressWords(entry: string, addressText: string, field: string): number[] {
  if (addressText.includes('%')) {
    throw new InvalidInputError(field, `allow-list entry ${quote(entry)} has a zone id; zone ids are not allowed`, {
      reason: 'not_allowed',
    });
  }
  const parsed = new Uint32Array(4);
  const kind = parseAddress(addressText, parsed);
  if (kind === 0) {
    throw new InvalidInputError(
      field,
      `allow-list entry ${quote(entry)} is not an IPv4 address (four decimal parts, no leading zeros) or an IPv6 address, optionally with /prefix`,
      { reason: 'unparseable' },
    );
  }
  if (!addressText.includes(':')) return [parsed[0] as number];
  return kind === 4 ? [0, 0, 0xffff, parsed[0] as number] : Array.from(parsed);
}

function formatWords(words: readonly number[]): string {
  return words.length === 4 ? formatIPv6(words) : formatIPv4(words[0] as number);
}

// Refuses an entry with host bits set, suggesting the network the user probably meant.
function assertNetwork(entry: string, words: readonly number[], prefix: number, field: string): void {
  const masked = words.map((w, i) => (w & wordMask(i, prefix)) >>> 0);
  if (masked.every((w, i) => w === words[i])) return;
  throw new InvalidInputError(
    field,
    `allow-list entry ${quote(entry)} has host bits set; did you mean ${formatWords(masked)}/${prefix}?`,
    { reason: 'host_bits_set' },
  );
}

/**
 * Parses one allow-list entry strictly, or throws `InvalidInputError` whose `field` is `field` and
 * whose message names the entry and what is wrong with it; its issue's `reason` is `wrong_type`,
 * `unparseable`, `out_of_range` (the prefix length), `host_bits_set` or `not_allowed` (a zone id).
 *
 * @example
 * parseAllowListEntry('2001:DB8::/32').canonical // '2001:db8::/32'
 * parseAllowListEntry('10/8')                    // throws: not an IPv4 or IPv6 address
 */
export function parseAllowListEntry(entry: unknown, field = 'allowedIps'): ParsedEntry {
  if (typeof entry !== 'string') {
    throw new InvalidInputError(field, `allow-list entry must be a string, got ${typeof entry}`, {
      reason: 'wrong_type',
    });
  }
  const slash = entry.indexOf('/');
  const words = addressWords(entry, slash < 0 ? entry : entry.slice(0, slash), field);
  const max = words.length === 4 ? 128 : 32;
  const prefix = slash < 0 ? max : prefixOf(entry.slice(slash + 1), max);
  if (prefix < 0) {
    throw new InvalidInputError(
      field,
      `allow-list entry ${quote(entry)} has a prefix length that is not a whole number from 0 to ${max}`,
      { reason: 'out_of_range' },
    );
  }
  assertNetwork(entry, words, prefix, field);
  const address = formatWords(words);
  return { kind: max === 128 ? 6 : 4, words, prefix, canonical: prefix === max ? address : `${address}/${prefix}` };
}

/** The most entries an allow list holds: 100,000 (matching stays one binary search however long it is). */
export const MAX_ALLOW_LIST_ENTRIES = 100_000;

/**
 * Validates a whole allow list and returns its entries in canonical form, duplicates removed, order kept.
 * Throws one `InvalidInputError` reporting every bad entry (its `issues`, each with `field` and the
 * entry's `index`; the error's own `field` is the first one's, such as `allowedIps[1]`).
 *
 * @example
 * normalizeAllowList(['203.0.113.0/24', '2001:DB8::/32']) // ['203.0.113.0/24', '2001:db8::/32']
 */
export function normalizeAllowList(entries: unknown, field = 'allowedIps'): string[] {
  if (!Array.isArray(entries)) {
    throw new InvalidInputError(field, `${field} must be an array of IP addresses or CIDR ranges`, {
      reason: 'wrong_type',
    });
  }
  if (entries.length > MAX_ALLOW_LIST_ENTRIES) {
    throw new InvalidInputError(
      field,
      `${field} has ${entries.length} entries; at most ${MAX_ALLOW_LIST_ENTRIES} are allowed`,
      { reason: 'too_many' },
    );
  }
  const seen = new Set<string>();
  const issues: InputIssue[] = [];
  entries.forEach((entry, index) => {
    const parsed = attempt(() => parseAllowListEntry(entry, field));
    if (parsed.ok) seen.add(parsed.value.canonical);
    else for (const { reason, message } of parsed.issues) issues.push({ field, index, reason, message });
  });
  if (issues.length > 0) throw refusal(issues);
  return [...seen];
}

// 128-bit helpers on four-word big-endian tuples held in plain arrays.
type Words = [number, number, number, number];

function cmp128(a: ArrayLike<number>, ai: number, b: ArrayLike<number>, bi: number): number {
  for (let k = 0; k < 4; k++) {
    const x = a[ai + k] as number;
    const y = b[bi + k] as number;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

// The request path's comparison: `table[i..i+3]` against `x[0..3]`, unrolled and on typed arrays only,
// so that V8 keeps it monomorphic (cmp128 also sees plain arrays at compile time).
function compareAt(table: Uint32Array, i: number, x: Uint32Array): number {
  let a = table[i] as number;
  let b = x[0] as number;
  if (a !== b) return a < b ? -1 : 1;
  a = table[i + 1] as number;
  b = x[1] as number;
  if (a !== b) return a < b ? -1 : 1;
  a = table[i + 2] as number;
  b = x[2] as number;
  if (a !== b) return a < b ? -1 : 1;
  a = table[i + 3] as number;
  b = x[3] as number;
  return a === b ? 0 : a < b ? -1 : 1;
}

function rangeOf(entry: ParsedEntry): { start: Words; end: Words } {
  const start = [0, 0, 0, 0] as Words;
  const end = [0, 0, 0, 0] as Words;
  for (let i = 0; i < 4; i++) {
    const mask = wordMask(i, entry.prefix);
    const w = (entry.words[i] as number) >>> 0;
    start[i] = (w & mask) >>> 0;
    end[i] = (w | ~mask) >>> 0;
  }
  return { start, end };
}

const MAPPED_START: Words = [0, 0, 0xffff, 0];
const MAPPED_END: Words = [0, 0, 0xffff, 0xffffffff];

type V4Range = [start: number, end: number];
type V6Range = { start: Words; end: Words };

// Splits entries into IPv4 ranges (IPv4 entries, and the IPv4-mapped part of IPv6 ones) and IPv6 ranges.
function rangesOf(entries: readonly ParsedEntry[]): { v4: V4Range[]; v6: V6Range[] } {
  const v4: V4Range[] = [];
  const v6: V6Range[] = [];
  for (const entry of entries) {
    if (entry.kind === 4) {
      const w = entry.words[0] as number;
      v4.push([w, w + 2 ** (32 - entry.prefix) - 1]);
      continue;
    }
    const r = rangeOf(entry);
    const lo = cmp128(r.start, 0, MAPPED_START, 0) > 0 ? r.start : MAPPED_START;
    const hi = cmp128(r.end, 0, MAPPED_END, 0) < 0 ? r.end : MAPPED_END;
    if (cmp128(lo, 0, hi, 0) <= 0) v4.push([lo[3], hi[3]]);
    v6.push(r);
  }
  return { v4, v6 };
}

// Sorted, overlapping and adjacent ranges merged, as one table of [start, end] pairs.
function mergeV4(ranges: V4Range[]): Float64Array {
  ranges.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [s, e] of ranges) {
    const last = out.length - 1;
    if (last >= 0 && s <= (out[last] as number) + 1) out[last] = Math.max(out[last] as number, e);
    else out.push(s, e);
  }
  return out.length === 0 ? NO_V4 : Float64Array.from(out);
}

// Sorted, overlapping ranges merged, as one table of eight words per range: start, then end.
function mergeV6(ranges: V6Range[]): Uint32Array {
  ranges.sort((a, b) => cmp128(a.start, 0, b.start, 0));
  const out: number[] = [];
  for (const r of ranges) {
    const end = out.length - 4;
    if (end >= 0 && cmp128(r.start, 0, out, end) <= 0) {
      if (cmp128(r.end, 0, out, end) > 0) out.splice(end, 4, ...r.end);
    } else out.push(...r.start, ...r.end);
  }
  return out.length === 0 ? NO_V6 : Uint32Array.from(out);
}

// What a list holds no ranges of, shared by every list: a typed array costs a few hundred bytes
// even when empty, and a cache holds one compiled list per key.
const NO_V4 = new Float64Array(0);
const NO_V6 = new Uint32Array(0);
// The parsed client address, shared by every list: `allows` never awaits, so calls never overlap.
const ADDRESS = new Uint32Array(4);

/**
 * A compiled allow list: answers "is this client address allowed?" with one strict parse and one
 * binary search. An empty list allows every address, even an absent one.
 *
 * @example
 * const list = compileAllowList(['203.0.113.0/24', '2001:db8::/32']);
 * list.allows('::ffff:203.0.113.9') // true
 * list.allows('203.0.113.9:443')    // false (not an address)
 */
export class CompiledAllowList {
  /** Number of entries it was compiled from. */
  readonly size: number;
  // [start, end] pairs of merged IPv4 ranges, sorted.
  private readonly v4: Float64Array;
  // Merged IPv6 ranges, sorted: four words of start then four words of end per range.
  private readonly v6: Uint32Array;

  constructor(entries: readonly ParsedEntry[]) {
    this.size = entries.length;
    const { v4, v6 } = rangesOf(entries);
    this.v4 = mergeV4(v4);
    this.v6 = mergeV6(v6);
  }

  /**
   * Whether `address` may use the key. Unparseable, absent, zoned or port-carrying addresses are
   * refused unless the list is empty.
   */
  allows(address: string | undefined | null): boolean {
    if (this.size === 0) return true;
    if (typeof address !== 'string') return false;
    const words = ADDRESS;
    const kind = parseAddress(address, words);
    if (kind === 4) return this.hasV4(words[0] as number);
    if (kind === 6) return this.hasV6(words);
    return false;
  }

  private hasV4(x: number): boolean {
    const table = this.v4;
    let lo = 0;
    let hi = (table.length >>> 1) - 1;
    // Last range whose start <= x.
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((table[mid * 2] as number) <= x) lo = mid + 1;
      else hi = mid - 1;
    }
    return hi >= 0 && x <= (table[hi * 2 + 1] as number);
  }

  private hasV6(x: Uint32Array): boolean {
    const table = this.v6;
    let lo = 0;
    let hi = (table.length >>> 3) - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (compareAt(table, mid * 8, x) <= 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return hi >= 0 && compareAt(table, hi * 8 + 4, x) >= 0;
  }
}

// Every empty list is this one: nothing to hold per key.
const EMPTY = new CompiledAllowList([]);

/**
 * Validates and compiles an allow list. Throws `InvalidInputError` naming the first bad entry.
 *
 * @example
 * compileAllowList(['10.0.0.0/8']).allows('10.1.2.3') // true
 */
export function compileAllowList(entries: readonly string[]): CompiledAllowList {
  if (entries.length === 0) return EMPTY;
  return new CompiledAllowList(entries.map((e, i) => parseAllowListEntry(e, `allowedIps[${i}]`)));
}
