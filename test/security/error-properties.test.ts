// Every error class keygate exports, given a raw key in every string it takes (a key pasted where an
// id, a field name or a path belongs), carries no raw key anywhere a log or a response could show it.
import { inspect } from 'node:util';
import * as keygate from 'keygate';
import { generateKey, KeygateError, parseKey } from 'keygate';
import * as webhooks from 'keygate/webhooks';
import { describe, expect, it } from 'vitest';

const raw = generateKey({ mode: 'live' });
const random = parseKey(raw)?.random ?? '';

/** Each exported error class, made with the raw key in every string argument. */
const MAKERS: Record<string, (key: string) => Error> = {
  KeygateError: (key) => new keygate.KeygateError('key_conflict', key, { field: key, keyId: key, state: key }),
  InvalidInputError: (key) => new keygate.InvalidInputError(key, key, { keyId: key, state: key }),
  KeyNotFoundError: (key) => new keygate.KeyNotFoundError(key),
  KeyRevokedError: (key) => new keygate.KeyRevokedError(key),
  KeyConflictError: (key) => new keygate.KeyConflictError(key, { field: key, keyId: key, state: key }),
  KeyInUseError: (key) => new keygate.KeyInUseError(key, key),
  KeyStoreUnavailableError: (key) => new keygate.KeyStoreUnavailableError(key),
  RateLimiterUnavailableError: (key) => new keygate.RateLimiterUnavailableError(key),
  CreditLedgerUnavailableError: (key) => new keygate.CreditLedgerUnavailableError(key),
  StoreLockedError: (key) => new keygate.StoreLockedError(key, 4242, key),
  UnsupportedError: (key) => new keygate.UnsupportedError(key, key),
  InvalidSignatureError: (key) => new webhooks.InvalidSignatureError('bad_signature', key),
};

/** Everything about an error that a log line, an inspector or a JSON response could print. */
function renderings(err: Error): [string, string][] {
  const own = Object.getOwnPropertyNames(err).map((name): [string, string] => [
    `own property ${name}`,
    String((err as unknown as Record<string, unknown>)[name]),
  ]);
  return [
    ['util.inspect', inspect(err, { showHidden: true, depth: 5 })],
    ['JSON.stringify', JSON.stringify(err)],
    ['String', String(err)],
    ['stack', err.stack ?? ''],
    ...own,
  ];
}

describe('an error given a raw key where something else belongs', () => {
  it('the table covers every error class keygate exports', () => {
    const exported = Object.entries({ ...keygate, ...webhooks })
      .filter(
        ([, value]) => value === KeygateError || (value as { prototype?: unknown }).prototype instanceof KeygateError,
      )
      .map(([name]) => name)
      .sort();
    expect(Object.keys(MAKERS).sort()).toEqual(exported);
  });

  it.each(Object.keys(MAKERS))('%s keeps no raw key in its message, properties, stack or serialisations', (name) => {
    const err = (MAKERS[name] as (key: string) => Error)(raw);
    expect(err).toBeInstanceOf(KeygateError);
    for (const [where, text] of renderings(err)) {
      expect(text, where).not.toContain(raw);
      expect(text, where).not.toContain(random);
    }
  });

  it('a key id stays readable: redaction cuts only what is shaped like a key', () => {
    const err = new keygate.KeyNotFoundError('key_0123456789abcdefghij');
    expect(err.keyId).toBe('key_0123456789abcdefghij');
    expect(new keygate.KeyNotFoundError(raw).keyId).toBe('mk_live_…');
  });
});
