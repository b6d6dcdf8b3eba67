// TRUST_PROXY is judged by what Express would trust: each setting is compiled with proxy-addr, the
// module Express compiles `trust proxy` with, to show that the refused ones would take X-Forwarded-For
// from a public address and the accepted ones would not.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { SettingError, trustProxyOf } from '../../../examples/email-verification/settings.js';

type Trust = (address: string, hop: number) => boolean;
const proxyaddr = createRequire(import.meta.url)('proxy-addr') as { compile(entries: string[]): Trust };

/** What Express does with a `trust proxy` string: split at commas, trim, compile with proxy-addr. */
const compileLikeExpress = (setting: string): Trust => proxyaddr.compile(setting.split(',').map((e) => e.trim()));

const PUBLIC_V4 = '8.8.8.8';
const PUBLIC_V6 = '2001:4860:4860::8888';
const HOST = '0.0.0.0'; // every interface: clients can connect directly

const refusal = (setting: string) => {
  try {
    trustProxyOf(setting, HOST);
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('TRUST_PROXY refuses a list that covers more than 1/256 of the public addresses of a family', () => {
  it.each([
    ['the IPv4 space in two halves', '0.0.0.0/1,128.0.0.0/1', PUBLIC_V4],
    ['the IPv4 space in four quarters', '0.0.0.0/2,64.0.0.0/2,128.0.0.0/2,192.0.0.0/2', PUBLIC_V4],
    ['the IPv4-mapped IPv6 block (all of IPv4)', '::ffff:0:0/96', PUBLIC_V4],
    ['half of IPv4 as IPv4-mapped IPv6', '::ffff:0:0/97', PUBLIC_V4],
    ['two public /8s (more than 1/256 of IPv4 in total)', '8.0.0.0/8,9.0.0.0/8', PUBLIC_V4],
    ['every global IPv6 unicast address', '2000::/3', PUBLIC_V6],
    ['half of the IPv6 space', '::/1', PUBLIC_V6],
  ])('%s (%s): proxy-addr would trust %s, so it is refused', (_, setting, address) => {
    expect(compileLikeExpress(setting)(address, 1)).toBe(true);
    const err = refusal(setting);
    expect(err).toBeInstanceOf(SettingError);
    expect(err).toMatchObject({ code: 'invalid_setting', setting: 'TRUST_PROXY' });
    const message = (err as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(/^TRUST_PROXY=.* trusts X-Forwarded-For from \d+\.\d% of the IPv[46] address space/);
  });

  it.each([['0.0.0.0/0'], ['::/0'], ['10.0.0.2, ::/0']])(
    'a /0 range (%s), which proxy-addr cannot even compile, is refused with the same reason',
    (setting) => {
      expect(() => compileLikeExpress(setting)).toThrow(/invalid range/);
      expect(refusal(setting)).toMatchObject({
        setting: 'TRUST_PROXY',
        message: expect.stringMatching(/% of the IPv/),
      });
    },
  );

  it('refuses a wide range whatever HOST is (a proxy on this machine forwards what the client sent)', () => {
    expect(() => trustProxyOf('0.0.0.0/1,128.0.0.0/1', '127.0.0.1')).toThrow(SettingError);
  });
});

describe('TRUST_PROXY accepts a list that names proxies', () => {
  it.each([
    ['a single proxy address', '10.0.0.2'],
    ['a public proxy address', '203.0.113.10'],
    ['a private /8', '10.0.0.0/8'],
    ['the private ranges written out', '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7'],
    ['shared address space (carrier-grade NAT, cluster networks)', '100.64.0.0/10'],
    ['a CDN: a few /13s and a /32', '104.16.0.0/13,172.64.0.0/13,2606:4700::/32'],
    ['one public /8 (exactly 1/256 of IPv4)', '17.0.0.0/8'],
    ["Express's loopback", 'loopback'],
    ["Express's linklocal", 'linklocal'],
    ["Express's uniquelocal", 'uniquelocal'],
    ['all three named ranges', 'loopback, linklocal, uniquelocal'],
  ])('%s (%s), which proxy-addr would not trust a random public client through', (_, setting) => {
    const accepted = trustProxyOf(setting, HOST);
    expect(typeof accepted).toBe('string');
    const trust = compileLikeExpress(accepted as string);
    expect(trust(PUBLIC_V4, 1)).toBe(false);
    expect(trust(PUBLIC_V6, 1)).toBe(false);
  });
});
