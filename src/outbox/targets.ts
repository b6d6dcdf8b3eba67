import { parseAllowListEntry } from '../ip/allow-list.js';
import { type AddressKind, parseAddress } from '../ip/parse.js';

// Where a webhook may not go (docs/guide/webhooks.md, "Where an endpoint may point"): the one list,
// as data. An endpoint's URL is held to it when it is added or changed (its host as WHATWG URL parsing
// leaves it, so `0x7f000001`, `2130706433` and `127.1` are 127.0.0.1 by then), and the dispatcher holds
// every address a name resolves to, at send time, to it again. `allowPrivateNetworks`, the operator's
// development switch, turns both off.

/**
 * The IPv4 ranges no webhook is sent to, each with why: loopback, private, shared (CGNAT),
 * link-local (cloud metadata lives at 169.254.169.254), unspecified, multicast, broadcast and the
 * IANA special-purpose blocks that reach no public receiver.
 *
 * @example
 * REFUSED_IPV4_RANGES[0] // ['0.0.0.0/8', 'unspecified ("this network")']
 */
export const REFUSED_IPV4_RANGES: readonly (readonly [cidr: string, why: string])[] = [
  ['0.0.0.0/8', 'unspecified ("this network")'],
  ['10.0.0.0/8', 'private (RFC 1918)'],
  ['100.64.0.0/10', 'shared address space (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud instance metadata)'],
  ['172.16.0.0/12', 'private (RFC 1918)'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private (RFC 1918)'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved, and the broadcast address'],
];

/**
 * The IPv6 ranges no webhook is sent to. An IPv4-mapped address (`::ffff:a.b.c.d`) is judged as the
 * IPv4 address it carries, and so is one in NAT64's `64:ff9b::/96`; every other address outside
 * global unicast (`2000::/3`) is refused too, listed here or not.
 *
 * @example
 * REFUSED_IPV6_RANGES[1] // ['::1/128', 'loopback']
 */
export const REFUSED_IPV6_RANGES: readonly (readonly [cidr: string, why: string])[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['2001::/23', 'IETF protocol assignments (Teredo included)'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'unique local (cloud instance metadata at fd00:ec2::254)'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
];

/**
 * Host names no webhook is sent to, whatever they resolve to: an exact name, or `.suffix` for every
 * name under it. A name without a dot (`metadata`, `db`) is refused as well: it can only mean a
 * name of the sender's own network.
 *
 * @example
 * REFUSED_HOST_NAMES.includes('.internal') // true
 */
export const REFUSED_HOST_NAMES: readonly string[] = [
  'localhost',
  '.localhost',
  'metadata.google.internal',
  '.internal',
  '.local',
  '.home.arpa',
];

interface Range {
  readonly kind: 4 | 6;
  readonly words: readonly number[];
  readonly prefix: number;
  readonly why: string;
}

function compile(list: readonly (readonly [string, string])[]): Range[] {
  return list.map(([cidr, why]) => {
    const { kind, words, prefix } = parseAllowListEntry(cidr);
    return { kind, words, prefix, why };
  });
}

const V4 = compile(REFUSED_IPV4_RANGES);
const V6 = compile(REFUSED_IPV6_RANGES);
const NAT64 = [0x0064ff9b, 0, 0];

function inRange(range: Range, words: ArrayLike<number>): boolean {
  for (let i = 0; i < range.words.length; i++) {
    const bits = Math.min(32, Math.max(0, range.prefix - i * 32));
    if (bits === 0) return true;
    const mask = (0xffffffff << (32 - bits)) >>> 0;
    if (((words[i] as number) & mask) >>> 0 !== range.words[i]) return false;
  }
  return true;
}

function refusedIPv4(value: number): string | null {
  const words = [value >>> 0];
  for (const range of V4) if (inRange(range, words)) return range.why;
  return null;
}

/**
 * Why a webhook may not be sent to `address` (an IPv4 or IPv6 address, as written in a URL's host or
 * answered by DNS; brackets and a zone id are taken off), or null when it may. Text that is not an
 * address is refused (fail closed).
 *
 * @example
 * refusedAddress('169.254.169.254')    // 'link-local (cloud instance metadata)'
 * refusedAddress('::ffff:127.0.0.1')   // 'loopback'
 * refusedAddress('93.184.215.14')      // null
 */
export function refusedAddress(address: string): string | null {
  let text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const words = new Uint32Array(4);
  const kind: AddressKind = parseAddress(text, words);
  if (kind === 0) return 'not an IP address';
  if (kind === 4) return refusedIPv4(words[0] as number);
  if (words[0] === NAT64[0] && words[1] === 0 && words[2] === 0) return refusedIPv4(words[3] as number);
  for (const range of V6) if (inRange(range, words)) return range.why;
  return (words[0] as number) >>> 29 === 1 ? null : 'not a global unicast address';
}

/**
 * Why a webhook may not be sent to the host of a parsed URL (`url.hostname`: an IP address, in
 * brackets for IPv6, or a lower-case name), or null when nothing in its text forbids it. A name that
 * passes still has every address it resolves to checked when a delivery is sent.
 *
 * @example
 * refusedHost('127.0.0.1')                 // 'loopback'
 * refusedHost('metadata.google.internal')  // 'a name of a private network'
 * refusedHost('hooks.example.com')         // null
 */
export function refusedHost(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.+$/, '');
  if (host.startsWith('[') || /^[0-9.]+$/.test(host)) return refusedAddress(host);
  if (host.includes(':')) return 'not a host name';
  for (const name of REFUSED_HOST_NAMES) {
    if (name.startsWith('.') ? host.endsWith(name) : host === name) return 'a name of a private network';
  }
  return host.includes('.') ? null : 'a name without a dot (a name of a private network)';
}
