import {
  DEFAULT_HOLD_TTL_MS,
  validEntriesArgs,
  validHoldArgs,
  validSettleArgs,
  validTopUpArgs,
} from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('credit ledger arguments', () => {
  it('gives a hold without ttlMs the default of 10 minutes', () => {
    expect(DEFAULT_HOLD_TTL_MS).toBe(600_000);
    expect(validHoldArgs('acct_1', 3)).toEqual({ accountId: 'acct_1', amount: 3, keyId: undefined, ttlMs: 600_000 });
  });

  it('trims an account id as key records do', () => {
    expect(validTopUpArgs('  acct_1 ', 5).accountId).toBe('acct_1');
  });

  it('gives entries a limit of 100 by default', () => {
    expect(validEntriesArgs('acct_1')).toEqual({ accountId: 'acct_1', limit: 100 });
  });

  it('settles the whole hold when no amount is given, and takes 0', () => {
    expect(validSettleArgs('hold_1')).toEqual({ holdId: 'hold_1', amount: undefined });
    expect(validSettleArgs('hold_1', 0)).toEqual({ holdId: 'hold_1', amount: 0 });
  });

  it('refuses an option the call does not take, naming it with reason unknown_option and the nearest name', () => {
    expect(thrown(() => validTopUpArgs('acct_1', 5, { ref: 'pay_1' }))).toMatchObject({
      code: 'invalid_input',
      field: 'ref',
      issues: [{ reason: 'unknown_option' }],
    });
    expect(thrown(() => validHoldArgs('acct_1', 5, { ttl: 1_000 }))).toMatchObject({
      field: 'ttl',
      message: expect.stringContaining('did you mean `ttlMs`?'),
      issues: [{ reason: 'unknown_option' }],
    });
  });

  it('refuses options that are not an object, naming options', () => {
    expect(thrown(() => validHoldArgs('acct_1', 5, 'fast'))).toMatchObject({
      field: 'options',
      issues: [{ reason: 'wrong_type' }],
    });
  });

  it('checks the account before the amount, and the amount before the options', () => {
    expect(thrown(() => validHoldArgs('', -1, { ttlMs: 0 }))).toMatchObject({ field: 'accountId' });
    expect(thrown(() => validHoldArgs('acct_1', -1, { ttlMs: 0 }))).toMatchObject({ field: 'amount' });
  });
});
