// The `keygate credits ...` commands: an account's prepaid credits in the ledger beside the key store
// `--store` names (docs/guide/cli.md, "Credits"). The CLI tops up and reads; holds and charges are
// the service's.
import { type CreditLedger, InvalidInputError } from 'keygate';
import { quote, validCreditAccount } from 'keygate/store-kit';
import { type Command, command } from '../command.js';
import { credits, formatBalance, formatEntryTable, formatReconciliation } from '../credits-format.js';
import { RECONCILE_MISMATCH_EXIT } from '../errors.js';

// Every credits command's own --help says where the ledger is.
const WHERE =
  'The ledger lives beside the keys of --store: in the same PostgreSQL database and schema (its ' +
  'keygate_credit_* tables, created when missing), the same MySQL/MariaDB database (<prefix>credit_* ' +
  'tables), the same SQLite file, or in the same Redis under <prefix>credits: ' +
  '(keygate:credits: by default), where the service keeps it.';

const account = { kind: 'string', value: 'A', required: true, help: 'the account whose credits these are' } as const;

/**
 * A whole number from `min` to `max` typed for `--<flag>`; anything else (a sign, a fraction, an
 * exponent, text) is an `InvalidInputError` naming the flag, before anything is opened or written.
 */
function wholeNumber(flag: string, text: string, min: number, max: number, unit: string): number {
  const n = /^[0-9]{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new InvalidInputError(
      `--${flag}`,
      `--${flag} must be a whole number of ${unit} from ${min} to ${max}, got ${quote(text)}`,
    );
  }
  return n;
}

const show = command({
  path: ['credits', 'show'],
  args: [],
  summary: "Shows an account's available credits, the credits held by requests in flight, and their total.",
  details: WHERE,
  flags: { account },
  async run({ flags, ledger }) {
    const r = await (await ledger()).reconcile(flags.account);
    return {
      json: { accountId: r.accountId, balance: r.balance, held: r.held, total: r.balance + r.held },
      text: formatBalance(r),
    };
  },
});

/** Whether the top-up with `reference` wrote an entry after the one that was newest before it. */
async function wroteEntry(ledger: CreditLedger, accountId: string, reference: string, before: string | undefined) {
  for (const entry of await ledger.entries(accountId, { limit: 1_000 })) {
    if (entry.id === before) return false;
    if (entry.kind === 'top_up' && entry.reference === reference) return true;
  }
  return false;
}

const topUp = command({
  path: ['credits', 'top-up'],
  args: [],
  summary: 'Adds credits to an account; with --reference, once per reference (a payment recorded twice credits once).',
  details: `Prints whether the top-up was applied or its reference already recorded, and the balance. ${WHERE}`,
  flags: {
    account,
    amount: { kind: 'string', value: 'N', required: true, help: 'the credits to add, a whole number >= 1' },
    reference: {
      kind: 'string',
      value: 'R',
      help: 'the payment this top-up records (e.g. its id); a reference the account already used adds nothing',
    },
  },
  async run({ flags, ledger, manager, actor }) {
    const accountId = validCreditAccount(flags.account);
    const amount = wholeNumber('amount', flags.amount, 1, Number.MAX_SAFE_INTEGER, 'credits');
    const reference = flags.reference;
    const book = await ledger();
    // The top-up goes into the audit log beside the keys' changes, with who ran it.
    const audit = (balance: number) =>
      manager().then((keys) =>
        keys.recordAudit({
          accountId,
          action: 'credits.topped_up',
          actor,
          changes: {
            balance: { before: balance - amount, after: balance },
            ...(reference ? { reference: { before: null, after: reference } } : {}),
          },
        }),
      );
    if (reference === undefined) {
      const { balance } = await book.topUp(accountId, amount);
      await audit(balance);
      return {
        json: { accountId, amount, applied: true, balance },
        text: `Added ${credits(amount)} to ${accountId}; balance now ${credits(balance)}.`,
      };
    }
    // The ledger answers a balance either way: whether this call credited shows in the entries, as
    // a top-up with the reference newer than the newest entry before it.
    const before = (await book.entries(accountId, { limit: 1 }))[0]?.id;
    const { balance } = await book.topUp(accountId, amount, { reference });
    const applied = await wroteEntry(book, accountId, reference, before);
    if (applied) await audit(balance);
    return {
      json: { accountId, amount, reference, applied, balance },
      text: applied
        ? `Added ${credits(amount)} to ${accountId} (reference ${reference}); balance now ${credits(balance)}.`
        : `Reference ${reference} was already recorded for ${accountId}: nothing added; balance now ${credits(balance)}.`,
    };
  },
});

const entries = command({
  path: ['credits', 'entries'],
  args: [],
  summary: "Lists an account's ledger entries (top-ups and charges), newest first.",
  details: `A charge's amount is negative; BALANCE is the available balance just after the entry. ${WHERE}`,
  flags: {
    account,
    limit: { kind: 'string', value: 'N', help: 'how many of the newest entries (default 20, at most 1000)' },
  },
  async run({ flags, ledger }) {
    const limit = flags.limit === undefined ? 20 : wholeNumber('limit', flags.limit, 1, 1_000, 'entries');
    const found = await (await ledger()).entries(flags.account, { limit });
    return { json: found, text: found.length === 0 ? 'no entries' : formatEntryTable(found) };
  },
});

const reconcile = command({
  path: ['credits', 'reconcile'],
  args: [],
  summary: `Checks that an account's entries add up to its balance plus its open holds; exits ${RECONCILE_MISMATCH_EXIT} when they do not.`,
  details: `Reads every entry of the account (on Redis, in one script that holds the server meanwhile). Exit codes: 0 ok, ${RECONCILE_MISMATCH_EXIT} mismatch (the figures still print), 4 the ledger failed. ${WHERE}`,
  flags: { account },
  async run({ flags, ledger }) {
    const r = await (await ledger()).reconcile(flags.account);
    return { json: r, text: formatReconciliation(r), ...(r.ok ? {} : { exitCode: RECONCILE_MISMATCH_EXIT }) };
  },
});

/** The `credits` group, in the order `--help` lists it. */
export const CREDITS_COMMANDS: readonly Command[] = [show, topUp, entries, reconcile];
