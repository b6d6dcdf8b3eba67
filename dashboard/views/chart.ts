import { html, raw } from 'hono/html';
import { count } from './format.js';

/** One day of a key's traffic. */
export interface DayTotals {
  readonly day: string;
  readonly allowed: number;
  readonly denied: number;
}

/** The `n` UTC days that end with `lastDay` (inclusive), oldest first, as `YYYY-MM-DD`. */
export function dayRange(lastDay: string, n: number): string[] {
  const end = Date.parse(`${lastDay}T00:00:00Z`);
  return Array.from({ length: n }, (_, i) => new Date(end - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/** A scale maximum that reads well: 1, 2 or 5 times a power of ten, at least `max`. */
function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

const f = (n: number) => String(Math.round(n * 10) / 10);

/** The scale's ticks: 0, the middle when it is a whole number, and the top; counts have no fractions. */
function ticksOf(max: number): number[] {
  return Number.isInteger(max / 2) ? [0, max / 2, max] : [0, max];
}

/**
 * The key page's usage chart: a bar per day, allowed below and denied on top, drawn on the server
 * as inline SVG (no script). `role="img"` with an `aria-label` stating the totals; the same numbers
 * are in the "Usage by day" table for screen readers.
 */
export function usageChart(days: readonly DayTotals[]) {
  const allowed = days.reduce((s, d) => s + d.allowed, 0);
  const denied = days.reduce((s, d) => s + d.denied, 0);
  const label = `Requests per day over the last ${days.length} days: ${count(allowed)} allowed, ${count(denied)} denied`;
  const width = 640;
  const height = 200;
  const left = 48;
  const top = 10;
  const plotW = width - left - 8;
  const plotH = height - top - 30;
  const max = niceMax(Math.max(0, ...days.map((d) => d.allowed + d.denied)));
  const slot = plotW / Math.max(days.length, 1);
  const barW = Math.max(1, slot * 0.7);
  const y = (n: number) => top + plotH - (n / max) * plotH;
  const bars = days.map((d, i) => {
    const x = left + i * slot + (slot - barW) / 2;
    const a = (d.allowed / max) * plotH;
    const dn = (d.denied / max) * plotH;
    return `<rect class="bar-allowed" x="${f(x)}" y="${f(top + plotH - a)}" width="${f(barW)}" height="${f(a)}"/><rect class="bar-denied" x="${f(x)}" y="${f(top + plotH - a - dn)}" width="${f(barW)}" height="${f(dn)}"/>`;
  });
  const grid = ticksOf(max).map(
    (v) =>
      `<line class="grid" x1="${left}" x2="${width - 8}" y1="${f(y(v))}" y2="${f(y(v))}"/><text class="axis" x="${left - 6}" y="${f(y(v) + 4)}" text-anchor="end">${count(v)}</text>`,
  );
  const labels = [0, Math.floor(days.length / 2), days.length - 1]
    .filter((i, k, all) => days[i] && all.indexOf(i) === k)
    .map(
      (i) =>
        `<text class="axis" x="${f(left + i * slot + slot / 2)}" y="${height - 8}" text-anchor="middle">${(days[i] as DayTotals).day.slice(5)}</text>`,
    );
  // Every value drawn is a number or a date this function formatted: nothing a user typed.
  return html`<svg class="chart" role="img" aria-label="${label}" viewBox="0 0 ${width} ${height}" preserveAspectRatio="xMidYMid meet">${raw(grid.join('') + bars.join('') + labels.join(''))}</svg>`;
}

/**
 * The key list's 30-day sparkline: one bar per day of all requests. `scaleMax` is the number of
 * requests a full-height bar stands for; the list passes its busiest day of all keys, so that bars
 * compare across rows. Default: this key's own busiest day.
 */
export function sparkline(totals: readonly number[], scaleMax = Math.max(...totals)) {
  const sum = totals.reduce((s, n) => s + n, 0);
  const label =
    sum === 0
      ? `No requests in the last ${totals.length} days`
      : `${count(sum)} requests in the last ${totals.length} days`;
  const width = 90;
  const height = 24;
  const max = Math.max(1, scaleMax, ...totals);
  const slot = width / Math.max(totals.length, 1);
  // One path of bars rather than a rect per day: a list of 50 keys stays a small page.
  const bars = totals
    .map((n, i) => {
      if (n === 0) return '';
      const h = Math.max(1, (n / max) * (height - 2));
      return `M${f(i * slot)} ${height}v${f(-h)}h${f(Math.max(1, slot - 1))}v${f(h)}z`;
    })
    .join('');
  return html`<svg class="spark" role="img" aria-label="${label}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}"><line class="spark-base" x1="0" x2="${width}" y1="${height - 0.5}" y2="${height - 0.5}"/>${bars ? raw(`<path d="${bars}"/>`) : ''}</svg>`;
}
