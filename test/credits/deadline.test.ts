import { CreditLedgerUnavailableError, InvalidInputError } from 'keygate';
import { withLedgerDeadline } from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (err) {
    return err;
  }
}

describe('withLedgerDeadline', () => {
  it("resolves with the call's answer within the deadline", async () => {
    expect(await withLedgerDeadline('TestLedger', 1_000, async () => 42)).toBe(42);
  });

  it('rejects with credit_ledger_unavailable once the deadline passes', async () => {
    const started = Date.now();
    const err = await rejection(withLedgerDeadline('TestLedger', 50, () => new Promise(() => {})));
    expect(err).toBeInstanceOf(CreditLedgerUnavailableError);
    expect(err).toMatchObject({ code: 'credit_ledger_unavailable', message: 'TestLedger did not answer within 50 ms' });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("wraps a client's failure, keeping it as cause", async () => {
    const failure = new Error('connection refused');
    const err = await rejection(withLedgerDeadline('TestLedger', 1_000, () => Promise.reject(failure)));
    expect(err).toBeInstanceOf(CreditLedgerUnavailableError);
    expect((err as Error).cause).toBe(failure);
  });

  it('wraps a call that throws before it returns a promise', async () => {
    const err = await rejection(
      withLedgerDeadline('TestLedger', 1_000, () => {
        throw new Error('bad client');
      }),
    );
    expect(err).toBeInstanceOf(CreditLedgerUnavailableError);
  });

  it('passes a keygate error through unchanged: a refused settle stays invalid_input', async () => {
    const refused = new InvalidInputError('amount', 'amount 4 is more than the hold', { reason: 'out_of_range' });
    expect(await rejection(withLedgerDeadline('TestLedger', 1_000, () => Promise.reject(refused)))).toBe(refused);
  });

  it('absorbs a failure that arrives after the deadline', async () => {
    let fail: (err: Error) => void = () => {};
    const late = new Promise<never>((_, reject) => {
      fail = reject;
    });
    const err = await rejection(withLedgerDeadline('TestLedger', 20, () => late));
    expect(err).toMatchObject({ code: 'credit_ledger_unavailable' });
    fail(new Error('too late'));
    await new Promise((resolve) => setTimeout(resolve, 10));
  });
});
