// Whether an allow list admits every address of a family: `0.0.0.0/0`, `::/0`, or any set of entries
// whose union does (`0.0.0.0/1` + `128.0.0.0/1`, `::ffff:0:0/96` for all of IPv4). Such a list is no
// allow list, whatever its length. Entries are parsed by keygate's own allow-list parser, so the
// spelling never matters; ranges are compared as numbers, as the request path matches them.
import { parseAllowListEntry } from '../../src/ip/allow-list.js';

/** An address family an allow list may cover whole. */
export type Family = 'IPv4' | 'IPv6';

// Half-open ranges [start, end) of addresses, as integers.
type Range = readonly [bigint, bigint];

const IPV4_SPACE = 1n << 32n;
const IPV6_SPACE = 1n << 128n;
// ::ffff:0:0/96, where an IPv4 client written as IPv6 is looked up (it matches IPv4 entries).
const MAPPED = 0xffffn << 32n;

const wordsToBigInt = (words: readonly number[]) => words.reduce((n, w) => (n << 32n) | BigInt(w >>> 0), 0n);

// Whether the ranges together hold every address from 0 to `space` - 1.
function coversAll(ranges: Range[], space: bigint): boolean {
  ranges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let reached = 0n;
  for (const [start, end] of ranges) {
    if (start > reached) return false;
    if (end > reached) reached = end;
    if (reached >= space) return true;
  }
  return reached >= space;
}

/**
 * The families whose every address `allowedIps` admits, in the order IPv4, IPv6: IPv4 entries and the
 * IPv4-mapped part of IPv6 entries count for IPv4; IPv6 entries, and IPv4 entries as their mapped
 * addresses, for IPv6. An entry that does not parse counts for nothing (a stored list never has one).
 * An empty list returns `[]`: it is no allow list, which `key_no_allow_list` reports.
 *
 * @example
 * familiesAllowedWhole(['0.0.0.0/1', '128.0.0.0/1']) // ['IPv4']
 * familiesAllowedWhole(['::ffff:0:0/96'])            // ['IPv4']
 * familiesAllowedWhole(['0.0.0.0/0', '::/0'])        // ['IPv4', 'IPv6']
 * familiesAllowedWhole(['10.0.0.0/8'])               // []
 */
export function familiesAllowedWhole(allowedIps: readonly string[]): Family[] {
  const v4: Range[] = [];
  const v6: Range[] = [];
  for (const text of allowedIps) {
    let entry: ReturnType<typeof parseAllowListEntry>;
    try {
      entry = parseAllowListEntry(text);
    } catch {
      continue;
    }
    const start = wordsToBigInt(entry.words);
    const bits = BigInt((entry.kind === 4 ? 32 : 128) - entry.prefix);
    const end = start + (1n << bits);
    if (entry.kind === 4) {
      v4.push([start, end]);
      v6.push([MAPPED + start, MAPPED + end]);
      continue;
    }
    v6.push([start, end]);
    const low = start > MAPPED ? start : MAPPED;
    const high = end < MAPPED + IPV4_SPACE ? end : MAPPED + IPV4_SPACE;
    if (low < high) v4.push([low - MAPPED, high - MAPPED]);
  }
  const families: Family[] = [];
  if (coversAll(v4, IPV4_SPACE)) families.push('IPv4');
  if (coversAll(v6, IPV6_SPACE)) families.push('IPv6');
  return families;
}
