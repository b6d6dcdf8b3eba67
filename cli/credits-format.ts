// How the `keygate credits` commands print a ledger's figures and entries for a person.
import type { CreditEntry, CreditReconciliation } from 'keygate';

const lines = (rows: ReadonlyArray<readonly [string, string]>) =>
  rows.map(([label, value]) => `  ${label.padEnd(12)} ${value}`).join('\n');

/**
 * `credits show`: the available balance, the open holds and their total, as `label value` lines;
 * a warning line when the entries do not add up (the figures of `credits reconcile`).
 *
 * @example
 * formatBalance({ accountId: 'acct_1', entries: 500, balance: 497, held: 3, ok: true });
 * //   account      acct_1
 * //   available    497 credits
 * //   held         3 credits (open holds)
 * //   total        500 credits (available + held)
 */
export function formatBalance(r: CreditReconciliation): string {
  const rows: Array<[string, string]> = [
    ['account', r.accountId],
    ['available', credits(r.balance)],
    ['held', `${credits(r.held)} (open holds)`],
    ['total', `${credits(r.balance + r.held)} (available + held)`],
  ];
  if (!r.ok) rows.push(['warning', `the entries add up to ${r.entries}: run keygate credits reconcile`]);
  return lines(rows);
}

/**
 * `credits reconcile`: the sum of the entries, the balance, the holds, and the verdict.
 *
 * @example
 * formatReconciliation({ accountId: 'acct_1', entries: 505, balance: 497, held: 3, ok: false });
 * // ... result  MISMATCH: the entries add up to 505, available + held is 500 (off by 5)
 */
export function formatReconciliation(r: CreditReconciliation): string {
  const sum = r.balance + r.held;
  const verdict = r.ok
    ? `ok: the entries add up to available + held (${sum})`
    : `MISMATCH: the entries add up to ${r.entries}, available + held is ${sum} (off by ${r.entries - sum})`;
  return lines([
    ['account', r.accountId],
    ['entries', `${r.entries} (the sum of every entry's amount)`],
    ['available', String(r.balance)],
    ['held', `${r.held} (open holds)`],
    ['result', verdict],
  ]);
}

/** `5 credits`, `1 credit`. */
export function credits(n: number): string {
  return `${n} credit${n === 1 ? '' : 's'}`;
}

/** An ISO timestamp to the second, in UTC: `2026-11-24 16:31:05`. */
function second(iso: string): string {
  return iso.slice(0, 19).replace('T', ' ');
}

/**
 * Entries as a table, newest first as given: time (UTC), kind, amount (signed), balance after, key,
 * reference and id, under a header line; numbers right-aligned.
 *
 * @example
 * formatEntryTable(await ledger.entries('acct_1'));
 * // DATE (UTC)           KIND    AMOUNT  BALANCE  KEY    REFERENCE  ID
 * // 2026-11-24 16:31:05  charge      -3      497  key_1             ce_8
 * // 2026-11-24 16:30:00  top_up    +500      500         pi_1       ce_7
 */
export function formatEntryTable(entries: readonly CreditEntry[]): string {
  const rows = [
    ['DATE (UTC)', 'KIND', 'AMOUNT', 'BALANCE', 'KEY', 'REFERENCE', 'ID'],
    ...entries.map((e) => [
      second(e.createdAt),
      e.kind,
      e.amount > 0 ? `+${e.amount}` : String(e.amount),
      String(e.balance),
      e.keyId ?? '',
      e.reference ?? '',
      e.id,
    ]),
  ];
  const numeric = new Set([2, 3]);
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) =>
          numeric.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
