import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import { InvalidInputError } from 'keygate';
import { utcDay } from 'keygate/store-kit';
import type { AccountPanelEntry, Dash, DashEnv } from '../context.js';
import { type ListedKey, readKeyList } from '../key-list.js';
import { readSummaries } from '../usage-summary.js';
import { dayRange, sparkline } from '../views/chart.js';
import { badge, count, time } from '../views/format.js';
import { render } from './render.js';

/** Keys per page of the list. */
export const PAGE_SIZE = 50;

function pageLink(dash: Dash, query: string, page: number): string {
  const params = new URLSearchParams();
  if (query) params.set('q', query);
  if (page > 1) params.set('page', String(page));
  const search = params.toString();
  return dash.path(`/${search ? `?${search}` : ''}`);
}

function rotationCell(key: ListedKey) {
  if (key.status !== 'active') return '';
  if (key.rotatedTo) return badge('in progress', 'plain');
  return key.rotationDue ? badge('due', 'warn') : '';
}

/**
 * The host's account panel entries; null when the panel failed (threw, rejected or returned something
 * that is not a list of entries). A failure is reported to `onError` and costs the page nothing.
 */
async function panelEntries(
  dash: Dash,
  account: string,
  request: Request,
): Promise<readonly AccountPanelEntry[] | null> {
  if (!dash.accountPanel) return [];
  try {
    const entries: unknown = await dash.accountPanel(account, request);
    if (!Array.isArray(entries) || !entries.every((e) => e !== null && typeof e === 'object')) {
      throw new InvalidInputError('accountPanel', 'accountPanel must return an array of { label, value }');
    }
    return entries as readonly AccountPanelEntry[];
  } catch (err) {
    dash.onError(err);
    return null;
  }
}

/** The account panel: the host's label and value pairs, escaped; a short note when it failed. */
function panel(entries: readonly AccountPanelEntry[] | null) {
  if (entries?.length === 0) return '';
  const body = entries
    ? html`<dl class="facts">${entries.map((e) => html`<div><dt>${String(e.label)}</dt><dd>${String(e.value)}</dd></div>`)}</dl>`
    : html`<p class="muted">Account details are unavailable right now.</p>`;
  return html`<section class="card account" aria-labelledby="account-title">
    <h2 id="account-title">Account</h2>
    ${body}
  </section>`;
}

function pagination(dash: Dash, query: string, page: number, pages: number) {
  if (pages <= 1) return '';
  return html`<nav class="pagination" aria-label="Pagination">
    ${page > 1 ? html`<a href="${pageLink(dash, query, page - 1)}" rel="prev">Previous</a>` : ''}
    <span>Page ${page} of ${pages}</span>
    ${page < pages ? html`<a href="${pageLink(dash, query, page + 1)}" rel="next">Next</a>` : ''}
  </nav>`;
}

async function listPage(c: Context<DashEnv>, dash: Dash) {
  const account = c.get('account');
  const query = (c.req.query('q') ?? '').trim().slice(0, 200);
  const requested = Number.parseInt(c.req.query('page') ?? '1', 10);
  const list = await readKeyList(dash, account, {
    page: Number.isFinite(requested) ? requested : 1,
    size: PAGE_SIZE,
    search: query || undefined,
  });
  const { page, pages, total } = list;
  const shown = list.keys;
  const days = dayRange(utcDay(dash.clock()), 30);
  const [summaries, entries] = await Promise.all([
    readSummaries(
      dash.store,
      shown.map((k) => k.id),
      days,
    ),
    panelEntries(dash, account, c.req.raw),
  ]);
  const rows = shown.map((key) => {
    const s = summaries.get(key.id);
    return html`<tr>
      <th scope="row"><a href="${dash.path(`/keys/${encodeURIComponent(key.id)}`)}">${key.name}</a></th>
      <td>${key.mode}</td>
      <td><code>${key.hint}</code></td>
      <td>${key.status}</td>
      <td>${time(key.createdAt)}</td>
      <td>${time(s?.lastUsedAt, true)}</td>
      <td>${sparkline(s?.daily ?? new Array(days.length).fill(0))}</td>
      <td>${rotationCell(key)}</td>
    </tr>`;
  });
  const plural = total === 1 ? '' : 's';
  const summary = query ? `${count(total)} key${plural} match “${query}”.` : `${count(total)} key${plural}.`;
  return render(c, dash, {
    title: 'API keys',
    body: html`<div class="title-row"><h1>API keys</h1><a class="button primary" href="${dash.path('/keys/new')}">Create key</a></div>
    ${panel(entries)}
    <form method="get" action="${dash.path('/')}" class="filter" role="search">
      <label for="q">Filter by name</label>
      <input id="q" name="q" type="search" value="${query}" autocomplete="off">
      <button type="submit" class="button">Filter</button>
      ${query ? html`<a href="${dash.path('/')}">Clear</a>` : ''}
    </form>
    <p class="muted" role="status">${summary}</p>
    ${
      total === 0 && !query
        ? html`<p class="empty">No keys yet. <a href="${dash.path('/keys/new')}">Create your first key</a>.</p>`
        : html`<div class="table-wrap"><table class="table keys">
      <caption class="visually-hidden">API keys</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Hint</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Last 30 days</th><th scope="col">Rotation</th></tr></thead>
      <tbody>${rows}</tbody>
    </table></div>`
    }
    ${pagination(dash, query, page, pages)}`,
  });
}

/** `GET /`: the account's keys, newest first, 50 a page (`?page=`), filtered by name with `?q=`. */
export function registerList(app: Hono<DashEnv>, dash: Dash): void {
  app.get('/', (c) => listPage(c, dash));
}
