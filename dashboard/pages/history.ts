import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import { type AuditEntry, InvalidInputError, UnsupportedError } from 'keygate';
import type { Dash, DashEnv } from '../context.js';
import { actorText, summarizeChanges } from '../views/audit-changes.js';
import { time } from '../views/format.js';
import type { KeyView } from './own-key.js';
import { keyNotFound, messagePage, render } from './render.js';

/** Entries on the history page, and in a key page's "History" section. */
export const HISTORY_PAGE_SIZE = 50;
export const KEY_HISTORY_SIZE = 10;

/** A page of entries and whether older ones exist; null when the store keeps no audit log. */
interface HistoryPage {
  readonly entries: readonly AuditEntry[];
  readonly more: boolean;
}

/** One more than shown is asked for, so that "Older entries" appears only when there are some. */
async function historyPage(
  dash: Dash,
  query: { accountId: string; keyId?: string; before?: string },
  size: number,
): Promise<HistoryPage | null> {
  try {
    const found = await dash.manager.audit({ ...query, limit: size + 1 });
    return { entries: found.slice(0, size), more: found.length > size };
  } catch (err) {
    if (err instanceof UnsupportedError) return null;
    throw err;
  }
}

function historyLink(dash: Dash, params: { key?: string; before?: string }): string {
  const search = new URLSearchParams();
  if (params.key) search.set('key', params.key);
  if (params.before) search.set('before', params.before);
  const query = search.toString();
  return dash.path(`/history${query ? `?${query}` : ''}`);
}

/** The "History" table: when, action, (key,) who and from where, what changed. Every value escaped. */
function historyTable(dash: Dash, entries: readonly AuditEntry[], withKey: boolean) {
  const rows = entries.map(
    (e) => html`<tr>
      <td>${time(e.at, true)}</td>
      <td><code>${e.action}</code></td>
      ${withKey ? html`<td>${e.keyId ? html`<a href="${dash.path(`/keys/${encodeURIComponent(e.keyId)}`)}"><code>${e.keyId}</code></a>` : html`<span class="muted">account</span>`}</td>` : ''}
      <td>${actorText(e.actor)}${e.address ? html` <span class="muted">from</span> <code>${e.address}</code>` : ''}</td>
      <td class="changes">${summarizeChanges(e.changes) || html`<span class="muted">none</span>`}</td>
    </tr>`,
  );
  return html`<div class="table-wrap"><table class="table compact history">
    <caption>History</caption>
    <thead><tr><th scope="col">When</th><th scope="col">Action</th>${withKey ? html`<th scope="col">Key</th>` : ''}<th scope="col">Actor</th><th scope="col">Changes</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>`;
}

const NO_LOG = 'This key store keeps no history.';

/** The key page's "History" section: its latest entries, and a link to older ones when there are. */
export async function keyHistorySection(dash: Dash, key: KeyView) {
  const page = await historyPage(dash, { accountId: key.accountId, keyId: key.id }, KEY_HISTORY_SIZE);
  const body =
    page === null
      ? html`<p class="muted">${NO_LOG}</p>`
      : page.entries.length === 0
        ? html`<p class="muted">Nothing recorded yet.</p>`
        : html`${historyTable(dash, page.entries, false)}
      ${page.more ? html`<p><a href="${historyLink(dash, { key: key.id, before: page.entries.at(-1)?.id })}">Older entries</a></p>` : ''}`;
  return html`<section class="card" aria-labelledby="history-title">
    <h2 id="history-title">History</h2>
    ${body}
  </section>`;
}

async function historyRoute(c: Context<DashEnv>, dash: Dash) {
  const account = c.get('account');
  const keyId = c.req.query('key') || undefined;
  const before = c.req.query('before') || undefined;
  let name: string | undefined;
  if (keyId) {
    const key = await dash.manager.get(keyId).catch(() => null);
    // Another account's key, or none: the same 404 as the key page.
    if (!key || key.accountId !== account) return keyNotFound(c, dash);
    name = key.name;
  }
  let page: HistoryPage | null;
  try {
    page = await historyPage(
      dash,
      { accountId: account, ...(keyId && { keyId }), ...(before && { before }) },
      HISTORY_PAGE_SIZE,
    );
  } catch (err) {
    if (!(err instanceof InvalidInputError)) throw err;
    return messagePage(c, dash, 400, 'Not a history page', 'This link does not lead to a page of the history.');
  }
  const title = name === undefined ? 'Account history' : `History of ${name}`;
  const back =
    keyId === undefined
      ? html`<a href="${dash.path('/')}">API keys</a>`
      : html`<a href="${dash.path('/')}">API keys</a> › <a href="${dash.path(`/keys/${encodeURIComponent(keyId)}`)}">${name}</a>`;
  const nav = page
    ? html`<nav class="pagination" aria-label="History pages">
      ${before ? html`<a href="${historyLink(dash, { key: keyId })}">Newest entries</a>` : ''}
      ${page.more ? html`<a href="${historyLink(dash, { key: keyId, before: page.entries.at(-1)?.id })}" rel="next">Older entries</a>` : ''}
    </nav>`
    : '';
  const body =
    page === null
      ? html`<p class="muted">${NO_LOG}</p>`
      : page.entries.length === 0
        ? html`<p class="muted">${before ? 'No older entries.' : 'Nothing recorded yet.'}</p>`
        : historyTable(dash, page.entries, keyId === undefined);
  return render(c, dash, {
    title,
    body: html`<p class="crumbs">${back}</p>
    <h1>${title}</h1>
    <p class="muted">Who created, changed, rotated and revoked keys, and signed in, newest first.</p>
    ${body}
    ${nav}`,
  });
}

/** `GET /history`: the account's audit log (`?key=` one key's), newest first, paged with `?before=`. */
export function registerHistory(app: Hono<DashEnv>, dash: Dash): void {
  app.get('/history', (c) => historyRoute(c, dash));
}
