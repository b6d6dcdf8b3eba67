import { html } from 'hono/html';
import type { CreditEntry } from 'keygate';
import type { Dash } from '../context.js';
import { count, time } from '../views/format.js';

/** How many of the newest entries the "Latest credit entries" table shows. */
export const LATEST_CREDIT_ENTRIES = 10;

/** What the "Credits" section shows: the balance, the newest entries, and the names of their keys. */
export interface CreditsView {
  readonly balance: number;
  readonly entries: readonly CreditEntry[];
  /** Key id -> name, for the keys of the signed-in account that the entries name. */
  readonly keyNames: ReadonlyMap<string, string>;
}

/**
 * The names of the account's keys the entries name: the ids already on the page are free, the rest
 * are asked of the manager. A key of another account, or one the manager cannot read, stays an id.
 */
async function keyNamesOf(
  dash: Dash,
  account: string,
  entries: readonly CreditEntry[],
  known: ReadonlyMap<string, string>,
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const ids = new Set(entries.flatMap((e) => (e.keyId === undefined ? [] : [e.keyId])));
  const nameOf = async (id: string) => {
    const key = await dash.manager.get(id).catch(() => null);
    return key?.accountId === account ? key.name : undefined;
  };
  await Promise.all(
    [...ids].map(async (id) => {
      const name = known.get(id) ?? (await nameOf(id));
      if (name !== undefined) names.set(id, name);
    }),
  );
  return names;
}

/**
 * The account's balance and newest entries from the dashboard's `credits` ledger, read only; null
 * when the ledger failed (reported to `onError`, and the page is still a 200); undefined without a
 * ledger (no section).
 *
 * @example
 * const credits = await readCredits(dash, account, new Map(shown.map((k) => [k.id, k.name])));
 */
export async function readCredits(
  dash: Dash,
  account: string,
  known: ReadonlyMap<string, string>,
): Promise<CreditsView | null | undefined> {
  const ledger = dash.credits;
  if (!ledger) return undefined;
  try {
    const [balance, entries] = await Promise.all([
      ledger.balance(account),
      ledger.entries(account, { limit: LATEST_CREDIT_ENTRIES }),
    ]);
    return { balance, entries, keyNames: await keyNamesOf(dash, account, entries, known) };
  } catch (err) {
    dash.onError(err);
    return null;
  }
}

const KINDS: Record<CreditEntry['kind'], string> = { top_up: 'top-up', charge: 'charge' };

function signed(amount: number): string {
  return amount > 0 ? `+${count(amount)}` : count(amount);
}

function credits(n: number): string {
  return `${count(n)} credit${n === 1 ? '' : 's'}`;
}

function keyCell(dash: Dash, entry: CreditEntry, names: ReadonlyMap<string, string>) {
  if (entry.keyId === undefined) return html`<span class="muted">none</span>`;
  const name = names.get(entry.keyId);
  if (name === undefined) return html`<code>${entry.keyId}</code>`;
  return html`<a href="${dash.path(`/keys/${encodeURIComponent(entry.keyId)}`)}">${name}</a>`;
}

function entryTable(dash: Dash, view: CreditsView) {
  if (view.entries.length === 0) return html`<p class="empty">No credit entries yet.</p>`;
  const rows = view.entries.map(
    (e) => html`<tr>
      <td>${time(e.createdAt, true)}</td>
      <td>${KINDS[e.kind] ?? e.kind}</td>
      <td class="num">${signed(e.amount)}</td>
      <td class="num">${count(e.balance)}</td>
      <td>${keyCell(dash, e, view.keyNames)}</td>
      <td>${e.reference === undefined ? html`<span class="muted">none</span>` : html`<code>${e.reference}</code>`}</td>
    </tr>`,
  );
  return html`<div class="table-wrap"><table class="table compact">
    <caption>Latest credit entries</caption>
    <thead><tr><th scope="col">Date</th><th scope="col">Kind</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Balance after</th><th scope="col">Key</th><th scope="col">Reference</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
}

/**
 * The "Credits" section of the account page: the available balance and the "Latest credit entries"
 * table, every value escaped; a short "Balance unavailable" notice when the ledger failed; nothing
 * without a ledger.
 *
 * @example
 * html`${creditsSection(dash, await readCredits(dash, account, known))}`
 */
export function creditsSection(dash: Dash, view: CreditsView | null | undefined) {
  if (view === undefined) return '';
  const body =
    view === null
      ? html`<p class="muted" role="status">Balance unavailable right now. Try again in a moment.</p>`
      : html`<dl class="facts"><div><dt>Available balance</dt><dd>${credits(view.balance)}</dd></div></dl>
    ${entryTable(dash, view)}`;
  return html`<section class="card credits" aria-labelledby="credits-title">
    <h2 id="credits-title">Credits</h2>
    ${body}
  </section>`;
}
