import { parseAddress } from '../ip/parse.js';

// One buffer for every call (this runs on the request path): parseAddress is synchronous and, on
// success, writes every word it reports (out[0] for IPv4, all four for IPv6), so nothing of an earlier
// address can leak into a later bucket.
const scratch = new Uint32Array(4);

/** The bucket every unparseable address shares, so that made-up address strings cannot mint fresh counters. */
export const UNPARSEABLE_BUCKET = 'invalid';

function hex(word: number): string {
  return (word >>> 0).toString(16).padStart(8, '0');
}

/**
 * The throttling bucket of a client address: an IPv4 address by itself (also when written as
 * IPv4-mapped IPv6), an IPv6 address by its /64 (one subscriber's LAN gets a /64, so counting single
 * IPv6 addresses would let a client rotate through 2^64 of them). Absent or empty: `undefined`,
 * not throttled. Any other text that is not an address: one shared bucket, `'invalid'`.
 *
 * @example
 * clientBucket('::ffff:203.0.113.7')     // '4:cb007107'
 * clientBucket('2001:db8:1:2:aaaa::1')   // '6:20010db800010002'
 * clientBucket('203.0.113.7:8080')       // 'invalid'
 * clientBucket(undefined)                // undefined
 */
export function clientBucket(address: string | null | undefined): string | undefined {
  if (typeof address !== 'string' || address === '') return undefined;
  const kind = parseAddress(address, scratch);
  if (kind === 4) return `4:${hex(scratch[0] as number)}`;
  if (kind === 6) return `6:${hex(scratch[0] as number)}${hex(scratch[1] as number)}`;
  return UNPARSEABLE_BUCKET;
}
