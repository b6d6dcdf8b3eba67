import { html } from 'hono/html';

const numbers = new Intl.NumberFormat('en-US');

/** `12,345`. */
export function count(n: number): string {
  return numbers.format(n);
}

/** `2026-11-22` for an ISO time. */
export function day(iso: string): string {
  return iso.slice(0, 10);
}

/** `2026-11-22 14:03 UTC` for an ISO time. */
export function dateTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** A `<time>` element for an ISO time, as a date or a date and time; `never` (or `fallback`) for null. */
export function time(iso: string | null | undefined, withTime = false, fallback = 'never') {
  if (!iso) return html`<span class="muted">${fallback}</span>`;
  return html`<time datetime="${iso}">${withTime ? dateTime(iso) : day(iso)}</time>`;
}

/** `15 minutes`, `2 hours`, `3 days`: the largest whole unit. */
export function duration(ms: number): string {
  const units: Array<[string, number]> = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
    ['second', 1_000],
  ];
  for (const [unit, size] of units) {
    const n = Math.floor(ms / size);
    if (n >= 1) return `${n} ${unit}${n === 1 ? '' : 's'}`;
  }
  return 'less than a second';
}

/** A word or two with its own colour and a text that says the same (never colour alone). */
export function badge(text: string, tone: 'ok' | 'warn' | 'bad' | 'plain' = 'plain') {
  return html`<span class="badge badge-${tone}">${text}</span>`;
}
