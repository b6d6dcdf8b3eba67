import { describe, expect, it } from 'vitest';
import { compileAllowList, normalizeAllowList, parseAllowListEntry } from '../../src/ip/allow-list.js';

describe('allow-list entries are validated strictly when written', () => {
  it.each([
    ['203.0.113.0/24', '203.0.113.0/24'],
    ['203.0.113.7', '203.0.113.7'],
    ['203.0.113.7/32', '203.0.113.7'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['2001:db8::/32', '2001:db8::/32'],
    ['2001:DB8::/32', '2001:db8::/32'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['::1', '::1'],
    ['::/0', '::/0'],
    ['::ffff:203.0.113.7', '::ffff:cb00:7107'],
    ['::ffff:203.0.113.0/120', '::ffff:cb00:7100/120'],
  ])('accepts %s as %s', (entry, canonical) => {
    expect(parseAllowListEntry(entry).canonical).toBe(canonical);
  });

  it.each([
    ['10/8', 'is not an IPv4 address'],
    ['010.0.0.0/8', 'is not an IPv4 address'],
    ['0x0a.0.0.0/8', 'is not an IPv4 address'],
    ['10.0.0.0/33', 'prefix length'],
    ['10.0.0.0/08', 'prefix length'],
    ['10.0.0.0/', 'prefix length'],
    ['::1/129', 'prefix length'],
    ['hello', 'is not an IPv4 address'],
    ['', 'is not an IPv4 address'],
    ['256.0.0.1', 'is not an IPv4 address'],
    ['1.2.3', 'is not an IPv4 address'],
    ['1.2.3.4.5', 'is not an IPv4 address'],
    [' 10.0.0.0/8', 'is not an IPv4 address'],
    ['fe80::1%eth0', 'zone id'],
    ['[::1]', 'is not an IPv4 address'],
    ['10.0.0.1:80', 'is not an IPv4 address'],
    ['10.0.0.1/8', 'host bits set; did you mean 10.0.0.0/8?'],
    ['2001:db8::1/32', 'host bits set; did you mean 2001:db8::/32?'],
    ['1:2:3:4:5:6:7:8:9', 'is not an IPv4 address'],
    ['1::2::3', 'is not an IPv4 address'],
    ['12345::', 'is not an IPv4 address'],
  ])('refuses %j with an error that names the entry (%s)', (entry, why) => {
    let error: unknown;
    try {
      normalizeAllowList(['192.0.2.1', entry]);
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: 'invalid_input', field: 'allowedIps[1]' });
    expect((error as Error).message).toContain(JSON.stringify(entry));
    expect((error as Error).message).toContain(why);
  });

  it.each([[null], ['10.0.0.0/8'], [{}], [[42]]])('refuses a list that is not an array of strings: %j', (value) => {
    expect(() => normalizeAllowList(value)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });

  it('canonicalises and de-duplicates, keeping order', () => {
    expect(normalizeAllowList(['2001:DB8::/32', '10.0.0.0/8', '2001:db8:0::/32'])).toEqual([
      '2001:db8::/32',
      '10.0.0.0/8',
    ]);
  });
});

describe('matching is done on parsed addresses, never strings', () => {
  const list = compileAllowList(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7']);

  it.each([
    ['203.0.113.7', true, 'inside an IPv4 range'],
    ['203.0.113.0', true, 'first address of the range'],
    ['203.0.113.255', true, 'last address of the range'],
    ['203.0.114.0', false, 'just past the range'],
    ['203.0.112.255', false, 'just before the range'],
    ['198.51.100.7', true, 'a single address entry'],
    ['198.51.100.8', false, 'next to a single address entry'],
    ['::ffff:203.0.113.7', true, 'IPv4-mapped IPv6, dotted'],
    ['::FFFF:203.0.113.7', true, 'IPv4-mapped IPv6, upper case'],
    ['::ffff:cb00:7107', true, 'IPv4-mapped IPv6, hex'],
    ['0:0:0:0:0:ffff:cb00:7107', true, 'IPv4-mapped IPv6, expanded'],
    ['::ffff:203.0.114.7', false, 'IPv4-mapped IPv6 outside the range'],
    ['::203.0.113.7', false, 'IPv4-compatible IPv6 is not IPv4'],
    ['64:ff9b::203.0.113.7', false, 'NAT64 is not IPv4'],
    ['2001:db8::1', true, 'inside an IPv6 range'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', true, 'expanded IPv6'],
    ['2001:DB8::1', true, 'upper-case IPv6'],
    ['2001:db9::1', false, 'outside the IPv6 range'],
    ['2001:db8::1%eth0', false, 'a zone id never widens a match'],
    ['fe80::1%25eth0', false, 'a URL-encoded zone id'],
    ['0313.0.113.7', false, 'octal IPv4'],
    ['0xcb.0.113.7', false, 'hex IPv4'],
    ['203.113.7', false, 'short IPv4'],
    ['3405803783', false, 'IPv4 as one number'],
    ['203.0.113.7.', false, 'trailing dot'],
    ['203.0.113.256', false, 'over-255 octet'],
    ['203.0.113.7:443', false, 'host:port'],
    ['[2001:db8::1]', false, 'brackets'],
    ['[2001:db8::1]:443', false, 'brackets and port'],
    [' 203.0.113.7', false, 'leading space'],
    ['203.0.113.7\t', false, 'trailing tab'],
    ['unknown', false, 'the word unknown'],
    ['', false, 'empty'],
    [undefined, false, 'undefined'],
    [null, false, 'null'],
  ] as Array<[string | null | undefined, boolean, string]>)('%j -> %s (%s)', (address, allowed) => {
    expect(list.allows(address)).toBe(allowed);
  });

  it('an empty list allows any address, even none', () => {
    const empty = compileAllowList([]);
    expect(empty.allows(undefined)).toBe(true);
    expect(empty.allows('unknown')).toBe(true);
  });

  it('IPv4 entries match IPv4-mapped clients and IPv6 mapped entries match plain IPv4 clients', () => {
    expect(compileAllowList(['::ffff:10.0.0.0/104']).allows('10.20.30.40')).toBe(true);
    expect(compileAllowList(['::ffff:10.0.0.0/104']).allows('11.0.0.1')).toBe(false);
    expect(compileAllowList(['::/0']).allows('192.0.2.1')).toBe(true);
    expect(compileAllowList(['0.0.0.0/0']).allows('2001:db8::1')).toBe(false);
  });

  it('merges overlapping and adjacent ranges without changing the answer', () => {
    const merged = compileAllowList(['10.0.0.0/25', '10.0.0.128/25', '10.0.0.64/26', '2001:db8::/48', '2001:db8::/32']);
    expect(merged.allows('10.0.0.200')).toBe(true);
    expect(merged.allows('10.0.1.0')).toBe(false);
    expect(merged.allows('2001:db8:ffff::1')).toBe(true);
    expect(merged.allows('255.255.255.255')).toBe(false);
    expect(compileAllowList(['255.255.255.255']).allows('255.255.255.255')).toBe(true);
  });

  it('answers correctly for every entry of a 10,000-entry list and for addresses between them', () => {
    const entries: string[] = [];
    for (let i = 0; i < 10_000; i++) entries.push(`10.${(i >> 8) & 255}.${i & 255}.0/28`);
    const big = compileAllowList(entries);
    expect(big.size).toBe(10_000);
    for (let i = 0; i < 10_000; i += 97) {
      const base = `10.${(i >> 8) & 255}.${i & 255}`;
      expect(big.allows(`${base}.15`)).toBe(true);
      expect(big.allows(`${base}.16`)).toBe(false);
    }
  });
});
