// How much of the public address space a `TRUST_PROXY` list trusts, counted the way Express's
// proxy-addr matches: an IPv4 range and its IPv4-mapped IPv6 form (`::ffff:0:0/96`) are the same
// addresses, and a host part is ignored (`10.0.0.1/8` is `10.0.0.0/8`).
import { isIP } from 'node:net';

/** Most public addresses of one family a trust setting may cover: a /8, 1/256 of the family's space. */
export const MAX_TRUSTED_SHARE = 1 / 256;

/** Express's named ranges (proxy-addr's), which cover no public address. */
export const NAMED_RANGES = Object.freeze({
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
});

const MAPPED = 0xffffn << 32n; // ::ffff:0.0.0.0, where IPv4 lives in the IPv6 space
/** @type {[bigint, bigint]} */
const V4_SPACE = [MAPPED, MAPPED + (1n << 32n)];

// Addresses no client on the internet connects from: trusting them trusts nobody out there.
const NOT_PUBLIC = merged(
  [
    ...Object.values(NAMED_RANGES).flat(),
    '0.0.0.0/8', // "this network"
    '100.64.0.0/10', // shared address space (carrier-grade NAT, cluster networks)
    '224.0.0.0/3', // multicast and reserved
    '::/127', // unspecified and loopback
    'ff00::/8', // multicast
  ].map(interval),
);

/** @param {string} text a dotted IPv4 address @returns {bigint} */
function ipv4(text) {
  return text.split('.').reduce((n, part) => (n << 8n) | BigInt(part), 0n);
}

/** @param {string} text an IPv6 address (zone id allowed, ignored) @returns {bigint} */
function ipv6(text) {
  const [head = '', tail] = text.replace(/%.*$/, '').split('::');
  /** @param {string} part */
  const groups = (part) => (part === '' ? [] : part.split(':'));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const last = tail === undefined ? front : back;
  const dotted = last.at(-1);
  if (dotted?.includes('.')) {
    const v4 = ipv4(dotted);
    last.splice(-1, 1, (v4 >> 16n).toString(16), (v4 & 0xffffn).toString(16));
  }
  const zeros = Array(8 - front.length - back.length).fill('0');
  const all = tail === undefined ? front : [...front, ...zeros, ...back];
  return all.reduce((n, group) => (n << 16n) | BigInt(`0x${group}`), 0n);
}

/**
 * The addresses of an address or CIDR (already validated) as `[start, end)` in the IPv6 space.
 *
 * @param {string} entry
 * @returns {[bigint, bigint]}
 */
function interval(entry) {
  const [address = '', prefix] = entry.split('/');
  const v4 = isIP(address) === 4;
  const bits = v4 ? 32n : 128n;
  const size = 1n << (bits - BigInt(prefix ?? bits));
  const start = ((v4 ? ipv4(address) : ipv6(address)) / size) * size;
  return v4 ? [MAPPED + start, MAPPED + start + size] : [start, start + size];
}

/**
 * The part of `range` inside `bound`, as a list of none or one range.
 *
 * @param {[bigint, bigint]} range @param {[bigint, bigint]} bound @returns {[bigint, bigint][]}
 */
function clip(range, bound) {
  const low = range[0] > bound[0] ? range[0] : bound[0];
  const high = range[1] < bound[1] ? range[1] : bound[1];
  return high > low ? [[low, high]] : [];
}

/** @param {[bigint, bigint][]} intervals @returns {[bigint, bigint][]} the same addresses, without overlaps */
function merged(intervals) {
  /** @type {[bigint, bigint][]} */
  const out = [];
  for (const next of [...intervals].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    const last = out.at(-1);
    if (last && next[0] <= last[1]) last[1] = next[1] > last[1] ? next[1] : last[1];
    else out.push([next[0], next[1]]);
  }
  return out;
}

/** @param {[bigint, bigint][]} ranges disjoint @returns {bigint} how many addresses they hold */
function size(ranges) {
  return ranges.reduce((total, [start, end]) => total + end - start, 0n);
}

/** @param {[bigint, bigint][]} ranges disjoint @returns {bigint} how many of them are public */
function publicIn(ranges) {
  return size(ranges) - size(ranges.flatMap((range) => NOT_PUBLIC.flatMap((hidden) => clip(range, hidden))));
}

/**
 * The share of each family's address space that a trust list covers with public addresses, from 0
 * to 1: IPv4 (IPv4 entries and the IPv4-mapped part of IPv6 entries) and IPv6 (the rest). Entries
 * are addresses, CIDRs or Express's named ranges, already validated.
 *
 * @param {readonly string[]} entries
 * @returns {{ ipv4: number, ipv6: number }}
 * @example
 * trustedShare(['0.0.0.0/1', '128.0.0.0/1']); // { ipv4: 0.86…, ipv6: 0 }
 * trustedShare(['10.0.0.0/8', '10.0.0.2']);   // { ipv4: 0, ipv6: 0 }
 */
export function trustedShare(entries) {
  const names = /** @type {Record<string, readonly string[]>} */ (NAMED_RANGES);
  const trusted = merged(entries.flatMap((entry) => names[entry] ?? [entry]).map(interval));
  const publicV4 = publicIn(trusted.flatMap((range) => clip(range, V4_SPACE)));
  const publicV6 = publicIn(trusted) - publicV4;
  return { ipv4: Number(publicV4) / 2 ** 32, ipv6: Number(publicV6) / 2 ** 128 };
}
