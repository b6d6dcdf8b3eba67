// The regular expression handed to GitHub is derived from the key format: it finds every key
// generateKey makes, whole, in surrounding text, and nothing that is not one.
import fc from 'fast-check';
import { generateKey } from 'keygate';
import { secretScanningPattern } from 'keygate/leaks';
import { describe, expect, it } from 'vitest';

const found = (pattern: string, text: string) => [...text.matchAll(new RegExp(pattern, 'g'))].map((m) => m[1]);

describe('secretScanningPattern', () => {
  it('is the documented expression for the default prefix', () => {
    expect(secretScanningPattern()).toBe('\\b(mk_(?:live|test)_[0-9A-Za-z]{38})\\b');
    expect(secretScanningPattern({ prefix: 'acme', mode: 'live' })).toBe('\\b(acme_live_[0-9A-Za-z]{38})\\b');
  });

  it('finds every generated key, live and test, whole, inside code', () => {
    fc.assert(
      fc.property(fc.constantFrom('live', 'test'), fc.constantFrom('mk', 'acme', 'k9'), (mode, prefix) => {
        const key = generateKey({ mode: mode as 'live' | 'test', prefix });
        const code = `const apiKey = "${key}";\nAPI_KEY=${key}\n`;
        expect(found(secretScanningPattern({ prefix }), code)).toEqual([key, key]);
      }),
      { numRuns: 200 },
    );
  });

  it('finds live keys only with mode live', () => {
    const live = generateKey({ mode: 'live' });
    const test = generateKey({ mode: 'test' });
    expect(found(secretScanningPattern({ mode: 'live' }), `${live} ${test}`)).toEqual([live]);
  });

  it('finds nothing in a key one character short or long, or with another prefix', () => {
    const key = generateKey({ mode: 'live' });
    const text = [key.slice(0, -1), `${key}x`, `x${key}`, key.replace('mk_', 'mx_'), key.replace('_live_', '_prod_')];
    expect(found(secretScanningPattern(), text.join(' '))).toEqual([]);
  });

  it('refuses a prefix generateKey would refuse, and an unknown mode', () => {
    expect(() => secretScanningPattern({ prefix: 'MK' })).toThrow(expect.objectContaining({ field: 'prefix' }));
    expect(() => secretScanningPattern({ mode: 'prod' as 'live' })).toThrow(expect.objectContaining({ field: 'mode' }));
  });

  it('refuses an option it does not know, naming the nearest', () => {
    expect(() => secretScanningPattern({ prefx: 'acme' } as never)).toThrow(
      expect.objectContaining({
        code: 'invalid_input',
        field: 'prefx',
        issues: [expect.objectContaining({ field: 'prefx', reason: 'unknown_option' })],
      }),
    );
    expect(() => secretScanningPattern({ modes: 'live' } as never)).toThrow('did you mean `mode`?');
  });
});
