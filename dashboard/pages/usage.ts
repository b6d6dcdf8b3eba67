import { html } from 'hono/html';
import { DENIALS, type DenialCode, type UsageReport } from 'keygate';
import { type DayTotals, usageChart } from '../views/chart.js';
import { count, time } from '../views/format.js';

function reason(code: string): string {
  return DENIALS[code as DenialCode]?.title ?? code.replaceAll('_', ' ');
}

/** A run of consecutive days: with traffic, one day; without, every quiet day from `first` to `last`. */
type DayRow = { quiet: false; day: DayTotals } | { quiet: true; first: string; last: string };

/** Newest first: each day with traffic, and each run of days without any collapsed into one row. */
function dayRows(totals: readonly DayTotals[]): DayRow[] {
  const rows: DayRow[] = [];
  for (const d of [...totals].reverse()) {
    const previous = rows.at(-1);
    if (d.allowed + d.denied > 0) rows.push({ quiet: false, day: d });
    else if (previous?.quiet) previous.first = d.day;
    else rows.push({ quiet: true, first: d.day, last: d.day });
  }
  return rows;
}

function byDayTable(totals: readonly DayTotals[]) {
  const rows = dayRows(totals).map((row) =>
    row.quiet
      ? html`<tr class="quiet"><th scope="row">${row.first === row.last ? row.first : `${row.first} to ${row.last}`}</th><td colspan="2" class="muted">No traffic</td></tr>`
      : html`<tr><th scope="row">${row.day.day}</th><td class="num">${count(row.day.allowed)}</td><td class="num">${count(row.day.denied)}</td></tr>`,
  );
  return html`<table class="table compact">
    <caption>Usage by day</caption>
    <thead><tr><th scope="col">Date</th><th scope="col" class="num">Allowed</th><th scope="col" class="num">Denied</th></tr></thead>
    <tbody>${rows}</tbody>
  </table>`;
}

/**
 * The key page's "Usage" section: totals, the chart (or "No traffic yet" when there is nothing to
 * draw), denials by reason, the last use, and the "Usage by day" table that says in text what the
 * chart draws: days with traffic, and runs of days without any as one row each.
 */
export function usageSection(report: UsageReport, days: readonly string[]) {
  const byDay = new Map(report.days.map((d) => [d.day, d]));
  const totals: DayTotals[] = days.map((day) => ({
    day,
    allowed: byDay.get(day)?.allowed ?? 0,
    denied: byDay.get(day)?.denied ?? 0,
  }));
  const quiet = totals.every((d) => d.allowed + d.denied === 0);
  const reasons = Object.entries(report.deniedBy).sort(([, a], [, b]) => (b ?? 0) - (a ?? 0));
  return html`<section class="card" aria-labelledby="usage-title">
    <h2 id="usage-title">Usage</h2>
    <p class="totals">Last ${days.length} days: <strong>${count(report.allowed)}</strong> allowed, <strong>${count(report.denied)}</strong> denied.</p>
    ${
      quiet
        ? html`<p class="no-traffic">${report.lastUsedAt ? `No traffic in the last ${days.length} days.` : 'No traffic yet.'}</p>`
        : html`${usageChart(totals)}
    <p class="legend" aria-hidden="true"><span class="swatch swatch-allowed"></span>allowed <span class="swatch swatch-denied"></span>denied</p>`
    }
    <p>Last used: ${time(report.lastUsedAt, true)}${report.lastUsedIp ? html` from <code>${report.lastUsedIp}</code>` : ''}</p>
    <div class="two-col">
      <div>
        <h3 id="denials-title">Denials by reason</h3>
        ${
          reasons.length === 0
            ? html`<p class="muted">No denied requests in this period.</p>`
            : html`<table class="table compact" aria-labelledby="denials-title">
          <thead><tr><th scope="col">Reason</th><th scope="col" class="num">Requests</th></tr></thead>
          <tbody>${reasons.map(([code, n]) => html`<tr><td>${reason(code)} <code>${code}</code></td><td class="num">${count(n ?? 0)}</td></tr>`)}</tbody>
        </table>`
        }
      </div>
      <div>${byDayTable(totals)}</div>
    </div>
  </section>`;
}
