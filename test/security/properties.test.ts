// Property tests: what must hold for every input, not only the ones we thought of.
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { authenticate, generateKey, KeyManager, MemoryKeyStore, parseKey } from 'keygate';
import { describe, expect, it } from 'vitest';
import { readHeader } from '../../src/auth/read-header.js';
import { compileAllowList } from '../../src/ip/allow-list.js';

// ---------------------------------------------------------------------------------------------
// The reference allow list: a loop of ipaddr.js `match` over strictly parsed entries. Strict means
// IPv4 in four-part decimal only (also as the dotted tail of an IPv6 address), no zone ids; an
// IPv4-mapped client is compared as the IPv4 address it carries.

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

function strictParse(text: string): Addr | null {
  if (text.includes('%') || text.length === 0) return null;
  if (!text.includes(':')) return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : null;
  if (!ipaddr.IPv6.isValid(text)) return null;
  const tail = text.slice(text.lastIndexOf(':') + 1);
  if (tail.includes('.') && !ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
  return ipaddr.IPv6.parse(text);
}

function referenceAllows(entries: readonly string[], client: string): boolean {
  if (entries.length === 0) return true;
  let address = strictParse(client);
  if (address === null) return false;
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    address = (address as ipaddr.IPv6).toIPv4Address();
  }
  for (const entry of entries) {
    const [text, bits] = entry.split('/') as [string, string | undefined];
    const network = strictParse(text) as Addr;
    const prefix = bits === undefined ? (network.kind() === 'ipv4' ? 32 : 128) : Number(bits);
    if (address.kind() === network.kind()) {
      if (address.match(network, prefix)) return true;
    } else if (address.kind() === 'ipv4') {
      // An IPv6 entry covers an IPv4 client through the IPv4-mapped range.
      if ((address as ipaddr.IPv4).toIPv4MappedAddress().match(network, prefix)) return true;
    }
  }
  return false;
}

// Addresses from a small universe, so that random clients often fall inside random entries.
const v4 = fc.tuple(fc.constantFrom(10, 198, 203), fc.constantFrom(0, 51), fc.integer({ min: 0, max: 7 }), fc.nat(255));
const v6Groups = fc.tuple(
  fc.constantFrom(0x2001, 0x2002, 0, 0x64),
  fc.constantFrom(0xdb8, 0xdb9, 0, 0xff9b),
  fc.constantFrom(0, 1),
  fc.constantFrom(0, 0xffff),
  fc.integer({ min: 0, max: 3 }),
  fc.constantFrom(0, 0xffff),
  fc.nat(0xffff),
  fc.nat(0xffff),
);

/** Every way to write an IPv6 address: compact, full with leading zeros, upper case, dotted tail. */
function spell(groups: readonly number[], style: number): string {
  const address = new ipaddr.IPv6([...groups]);
  switch (style) {
    case 0:
      return address.toString();
    case 1:
      return address
        .toNormalizedString()
        .split(':')
        .map((g) => g.padStart(4, '0'))
        .join(':');
    case 2:
      return address.toString().toUpperCase();
    case 3:
      return address.toNormalizedString();
    default: {
      const g = groups as number[];
      const tail = `${(g[6] as number) >> 8}.${(g[6] as number) & 255}.${(g[7] as number) >> 8}.${(g[7] as number) & 255}`;
      return `${g
        .slice(0, 6)
        .map((x) => x.toString(16))
        .join(':')}:${tail}`;
    }
  }
}

const ipv4Text = v4.map((p) => p.join('.'));
const ipv6Text = fc.tuple(v6Groups, fc.nat(4)).map(([g, style]) => spell(g, style));
const mappedText = fc.tuple(v4, fc.boolean()).map(([p, upper]) => `::${upper ? 'FFFF' : 'ffff'}:${p.join('.')}`);
// Non-canonical and broken forms: these must never match anything.
const junkText = fc.oneof(
  fc.ipV4Extended(),
  ipv4Text.map((a) => `${a}:443`),
  ipv6Text.map((a) => `[${a}]`),
  ipv6Text.map((a) => `${a}%eth0`),
  ipv4Text.map((a) => a.replace('.', '.0')),
  fc.string({ maxLength: 20 }),
);
const clientText = fc.oneof(ipv4Text, ipv6Text, mappedText, junkText);

const entryText = fc
  .oneof(
    fc.tuple(ipv4Text, fc.integer({ min: 0, max: 32 })),
    fc.tuple(ipv6Text, fc.integer({ min: 0, max: 128 })),
    fc.tuple(mappedText, fc.integer({ min: 96, max: 128 })),
  )
  .map(([address, prefix]) => {
    const network = ipaddr.parse(address).kind() === 'ipv4' ? ipaddr.IPv4 : ipaddr.IPv6;
    const masked = network.networkAddressFromCIDR(`${address}/${prefix}`).toString();
    return prefix === (network === ipaddr.IPv4 ? 32 : 128) ? masked : `${masked}/${prefix}`;
  });

describe('compileAllowList(...).allows agrees with the ipaddr.js reference', () => {
  it('on random lists and addresses, IPv4 and IPv6, any spelling', () => {
    let matched = 0;
    fc.assert(
      fc.property(
        fc.array(entryText, { maxLength: 6 }),
        fc.array(clientText, { minLength: 1, maxLength: 8 }),
        (entries, clients) => {
          const list = compileAllowList(entries);
          for (const client of clients) {
            const want = referenceAllows(entries, client);
            if (want && entries.length > 0) matched++;
            expect([client, list.allows(client)]).toEqual([client, want]);
          }
        },
      ),
      { numRuns: 3000 },
    );
    // The universe is small on purpose; make sure the property saw both answers many times.
    expect(matched).toBeGreaterThan(500);
  });

  it('never matches a junk spelling, even of a listed address', () => {
    fc.assert(
      fc.property(ipv4Text, (a) => {
        const list = compileAllowList([`${a}`, '::ffff:0:0/96']);
        for (const junk of [`0${a}`, `${a}:80`, `${a}%1`, `[${a}]`, `${a} `, a.split('.').slice(0, 3).join('.')]) {
          expect([junk, list.allows(junk)]).toEqual([junk, false]);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('keys', () => {
  it('parseKey(generateKey()) always round-trips', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('live', 'test') as fc.Arbitrary<'live' | 'test'>,
        fc.stringMatching(/^[a-z][a-z0-9]{0,15}$/),
        (mode, prefix) => {
          const key = generateKey({ mode, prefix });
          const parsed = parseKey(key, prefix);
          expect(parsed).not.toBeNull();
          expect(`${parsed?.prefix}_${parsed?.mode}_${parsed?.random}${parsed?.checksum}`).toBe(key);
          expect(parsed?.mode).toBe(mode);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('any single-character change to a stored key is caught by the checksum or refused by the store', async () => {
    const store = new MemoryKeyStore();
    const keys = new KeyManager({ store });
    const { secret } = await keys.create({ accountId: 'a', name: 'k', mode: 'live' });
    const reached: string[] = [];
    const spy = {
      findByHash: (h: string) => {
        reached.push(h);
        return store.findByHash(h);
      },
    };
    await fc.assert(
      fc.asyncProperty(
        fc.nat(secret.length - 1),
        fc.oneof(
          fc.constantFrom(...'abcxyzABCXYZ0189_-é '.split('')),
          fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
        ),
        async (at, c) => {
          fc.pre(secret[at] !== c);
          const changed = secret.slice(0, at) + c + secret.slice(at + 1);
          const result = await authenticate({ headers: { 'x-api-key': changed } }, spy);
          expect(result.ok).toBe(false);
          expect(['malformed_api_key', 'invalid_api_key', 'missing_api_key']).toContain(result.ok ? '' : result.code);
        },
      ),
      { numRuns: 3000 },
    );
    // CRC-32 catches every single-character substitution: none got as far as the store.
    expect(reached).toEqual([]);
  });
});

describe('authenticate, for any header value and any address', async () => {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const active = await keys.create({
    accountId: 'a',
    name: 'listed',
    mode: 'live',
    permissions: ['p'],
    allowedIps: ['203.0.113.0/24', '2001:db8::/32'],
  });
  const open = await keys.create({ accountId: 'a', name: 'open', mode: 'test', permissions: ['p'] });
  const revoked = await keys.create({ accountId: 'a', name: 'revoked', mode: 'live', permissions: ['p'] });
  await keys.revoke(revoked.key.id);
  const secrets = [active.secret, open.secret, revoked.secret];
  const valid = new Set([active.secret, open.secret]);

  const value = fc.oneof(
    fc.constantFrom(...secrets),
    fc.constantFrom(...secrets).map((s) => ` ${s}\t`),
    fc.tuple(fc.constantFrom(...secrets), fc.string({ maxLength: 3 })).map(([s, x]) => s + x),
    fc.constantFrom(...secrets).map((s) => [s, s]),
    fc.string(),
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.constantFrom(undefined, null, 0, 42, {}, [], true),
  );
  const name = fc.constantFrom('x-api-key', 'X-API-Key', 'X-Api-Key', 'authorization', 'x-api-keys');
  const address = fc.oneof(clientText, fc.constantFrom(undefined, null, '', '203.0.113.9', '2001:db8::9'));

  it('never throws, and allows only a valid active key from an address its allow list holds', async () => {
    await fc.assert(
      fc.asyncProperty(name, value, address, fc.boolean(), async (field, v, ip, fetchHeaders) => {
        let headers: Record<string, unknown> | Headers = { [field]: v };
        if (fetchHeaders) {
          headers = new Headers();
          try {
            for (const one of Array.isArray(v) ? v : [v]) headers.append(field, String(one));
          } catch {
            return; // a value Fetch itself refuses never reaches authenticate
          }
        }
        const result = await authenticate({ headers: headers as never, ip: ip as never }, store, {
          permissions: ['p'],
        });
        if (!result.ok) return;
        const sent = readHeader(headers as never, 'x-api-key') as string;
        expect(valid.has(sent)).toBe(true);
        if (sent === active.secret) expect(compileAllowList(['203.0.113.0/24', '2001:db8::/32']).allows(ip)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
