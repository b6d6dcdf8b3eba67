import { describe, expect, it } from 'vitest';
import { clientBucket, UNPARSEABLE_BUCKET } from '../../src/throttle/client-bucket.js';

describe('clientBucket', () => {
  it('buckets IPv4 alone, IPv4-mapped IPv6 as IPv4, IPv6 by its /64, anything else in one bucket', () => {
    expect(clientBucket('203.0.113.7')).toBe('4:cb007107');
    expect(clientBucket('::ffff:203.0.113.7')).toBe('4:cb007107');
    expect(clientBucket('2001:db8:1:2:aaaa::1')).toBe('6:20010db800010002');
    expect(clientBucket('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('6:20010db800010002');
    expect(clientBucket('203.0.113.7:8080')).toBe(UNPARSEABLE_BUCKET);
    expect(clientBucket('')).toBeUndefined();
    expect(clientBucket(undefined)).toBeUndefined();
  });

  it('gives each address the same bucket whatever was bucketed before it (one scratch buffer for all calls)', () => {
    const addresses = [
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      '::',
      '::1',
      '2001:db8::',
      'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255',
      '::ffff:0.0.0.0',
      '1::2',
      '255.255.255.255',
      '0.0.0.0',
      'fe80::1:2:3:4',
      'not an address',
      '1:2:3:4:5:6:7::',
    ];
    const alone = addresses.map((address) => clientBucket(address));
    expect(alone).toEqual([
      '6:ffffffffffffffff',
      '6:0000000000000000',
      '6:0000000000000000',
      '6:20010db800000000',
      '6:ffffffffffffffff',
      '4:00000000',
      '6:0001000000000000',
      '4:ffffffff',
      '4:00000000',
      '6:fe80000000000000',
      UNPARSEABLE_BUCKET,
      '6:0001000200030004',
    ]);
    // Every order of every pair: the answer never depends on what the buffer held.
    for (const [i, first] of addresses.entries()) {
      for (const [j, second] of addresses.entries()) {
        clientBucket(first);
        expect({ after: first, address: second, bucket: clientBucket(second) }).toEqual({
          after: first,
          address: second,
          bucket: alone[j],
        });
        expect(clientBucket(first)).toBe(alone[i]);
      }
    }
  });
});
