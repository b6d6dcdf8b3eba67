import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import type { KeyMode, KeyStatus } from 'keygate';
import { InvalidInputError } from 'keygate';
import { utcDay } from 'keygate/store-kit';
import type { AccountPanelEntry, Dash, DashEnv } from '../context.js';
import { type ListedKey, readKeyList } from '../key-list.js';
import { readSummaries } from '../usage-summary.js';
import { dayRange, sparkline } from '../views/chart.js';
import { badge, count, time } from '../views/format.js';
import { creditsSection, readCredits } from './credits.js';
import { render } from './render.js';
import { type Partners, partnerLink, partnersOf } from './rotation-pair.js';
import { hasWebhooks } from './webhooks.js';

/** Keys per page of the list. */
export const PAGE_SIZE = 50;

const STATUSES = ['active', 'suspended', 'revoked'] as const;
const MODES = ['test', 'live'] as const;

/** The list's filter as the query string gives it (`q`, `status`, `mode`); unknown values filter nothing. */
/** What the key list is filtered by; a part left out filters nothing. */
interface KeyListFilter {
  /** Found, case-insensitively, in the key's name, hint or id. */
  readonly text?: string;
  readonly status?: KeyStatus;
  readonly mode?: KeyMode;
}

function filterOf(c: Context<DashEnv>): KeyListFilter & { text: string } {
  const pick = <T extends string>(value: string | undefined, allowed: readonly T[]) => allowed.find((a) => a === value);
  return {
    text: (c.req.query('q') ?? '').trim().slice(0, 200),
    status: pick(c.req.query('status'), STATUSES),
    mode: pick(c.req.query('mode'), MODES),
  };
}

function pageLink(dash: Dash, filter: KeyListFilter, page: number): string {
  const params = new URLSearchParams();
  if (filter.text) params.set('q', filter.text);
  if (filter.status) params.set('status', filter.status);
  if (filter.mode) params.set('mode', filter.mode);
  if (page > 1) params.set('page', String(page));
  const search = params.toString();
  return dash.path(`/${search ? `?${search}` : ''}`);
}

/** Where the key stands in a rotation: the key it was rotated from, the key replacing it, or due. */
function rotationCell(dash: Dash, key: ListedKey, partners: Partners) {
  const lines = [
    key.rotatedFrom ? html`<span class="pair">rotated from ${partnerLink(dash, key.rotatedFrom, partners)}</span>` : '',
    key.rotatedTo ? html`<span class="pair">replaced by ${partnerLink(dash, key.rotatedTo, partners)}</span>` : '',
    key.status === 'active' && key.rotatedTo ? badge('in progress', 'plain') : '',
    key.status === 'active' && !key.rotatedTo && key.rotationDue ? badge('due', 'warn') : '',
  ];
  return lines.filter((line) => line !== '');
}

function select(id: string, label: string, value: string | undefined, options: readonly string[]) {
  return html`<label for="${id}">${label}</label>
      <select id="${id}" name="${id}"><option value=""${value ? '' : ' selected'}>any</option>${options.map(
        (o) => html`<option value="${o}"${value === o ? ' selected' : ''}>${o}</option>`,
      )}</select>`;
}

/** The filter form: a GET, so a filtered list has its own URL and needs no script. */
function filterForm(dash: Dash, filter: KeyListFilter) {
  const any = filter.text || filter.status || filter.mode;
  return html`<form method="get" action="${dash.path('/')}" class="filter" role="search" aria-label="Filter keys">
      <label for="q">Filter by name, hint or ID</label>
      <input id="q" name="q" type="search" value="${filter.text ?? ''}" autocomplete="off">
      ${select('status', 'Status', filter.status, STATUSES)}
      ${select('mode', 'Mode', filter.mode, MODES)}
      <button type="submit" class="button">Filter</button>
      ${any ? html`<a href="${dash.path('/')}">Clear</a>` : ''}
    </form>`;
}

/** "3 keys." or "3 keys match “ci”, status revoked, mode live." */
function summaryOf(total: number, filter: KeyListFilter): string {
  const plural = total === 1 ? '' : 's';
  const parts = [
    filter.text ? `“${filter.text}”` : '',
    filter.status ? `status ${filter.status}` : '',
    filter.mode ? `mode ${filter.mode}` : '',
  ].filter(Boolean);
  const verb = total === 1 ? 'matches' : 'match';
  return parts.length > 0
    ? `${count(total)} key${plural} ${verb} ${parts.join(', ')}.`
    : `${count(total)} key${plural}.`;
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

function pagination(dash: Dash, filter: KeyListFilter, page: number, pages: number) {
  if (pages <= 1) return '';
  return html`<nav class="pagination" aria-label="Pagination">
    ${page > 1 ? html`<a href="${pageLink(dash, filter, page - 1)}" rel="prev">Previous</a>` : ''}
    <span>Page ${page} of ${pages}</span>
    ${page < pages ? html`<a href="${pageLink(dash, filter, page + 1)}" rel="next">Next</a>` : ''}
  </nav>`;
}

async function listPage(c: Context<DashEnv>, dash: Dash) {
  const account = c.get('account');
  const filter = filterOf(c);
  const requested = Number.parseInt(c.req.query('page') ?? '1', 10);
  const list = await readKeyList(dash, account, {
    page: Number.isFinite(requested) ? requested : 1,
    size: PAGE_SIZE,
    search: filter.text || undefined,
    status: filter.status,
    mode: filter.mode,
  });
  const { page, pages, total } = list;
  const shown = list.keys;
  const days = dayRange(utcDay(dash.clock()), 30);
  const names = new Map(shown.map((k) => [k.id, k.name]));
  const [summaries, entries, partners, credits] = await Promise.all([
    readSummaries(
      dash.store,
      shown.map((k) => k.id),
      days,
    ),
    panelEntries(dash, account, c.req.raw),
    partnersOf(dash, account, shown),
    readCredits(dash, account, names),
  ]);
  // One scale for every sparkline on the page, so that 3 and 11 requests do not look alike.
  const busiestDay = Math.max(0, ...[...summaries.values()].flatMap((s) => s.daily));
  const rows = shown.map((key) => {
    const s = summaries.get(key.id);
    return html`<tr>
      <th scope="row"><a href="${dash.path(`/keys/${encodeURIComponent(key.id)}`)}">${key.name}</a></th>
      <td>${key.mode}</td>
      <td><code>${key.hint}</code></td>
      <td>${key.status}</td>
      <td>${time(key.createdAt)}</td>
      <td>${time(s?.lastUsedAt, true)}</td>
      <td>${sparkline(s?.daily ?? new Array(days.length).fill(0), busiestDay)}</td>
      <td class="rotation">${rotationCell(dash, key, partners)}</td>
    </tr>`;
  });
  const filtered = !!(filter.text || filter.status || filter.mode);
  return render(c, dash, {
    title: 'API keys',
    body: html`<div class="title-row"><h1>API keys</h1><a class="button primary" href="${dash.path('/keys/new')}">Create key</a></div>
    ${panel(entries)}
    ${creditsSection(dash, credits)}
    ${filterForm(dash, filter)}
    <p class="muted" role="status">${summaryOf(total, filter)}</p>
    ${
      total === 0 && !filtered
        ? html`<p class="empty">No keys yet. <a href="${dash.path('/keys/new')}">Create your first key</a>.</p>`
        : html`<div class="table-wrap"><table class="table keys">
      <caption class="visually-hidden">API keys</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Hint</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Last 30 days</th><th scope="col">Rotation</th></tr></thead>
      <tbody>${rows}</tbody>
    </table></div>
    ${busiestDay > 0 ? html`<p class="hint">The “Last 30 days” bars share one scale: a full bar is ${count(busiestDay)} request${busiestDay === 1 ? '' : 's'} in a day.</p>` : ''}`
    }
    ${pagination(dash, filter, page, pages)}
    <p><a href="${dash.path('/history')}">Account history</a>${hasWebhooks(dash) ? html` · <a href="${dash.path('/webhooks')}">Webhooks</a>` : ''}</p>`,
  });
}

/**
 * `GET /`: the account's keys, newest first, 50 a page (`?page=`), filtered by text in the name,
 * hint or id (`?q=`), by status (`?status=active|suspended|revoked`) and by mode (`?mode=test|live`).
 */
export function registerList(app: Hono<DashEnv>, dash: Dash): void {
  app.get('/', (c) => listPage(c, dash));
}
