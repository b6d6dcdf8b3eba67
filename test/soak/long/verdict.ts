// Whether the figures stayed flat from the end of the warm-up to the end of the run. Each figure has a
// stated tolerance; a table may also grow by what the run's own activity explains: a row per key
// created (the key records, their activity and usage), a row per charge or top-up (the ledger's
// entries, kept as the record of what was billed). Everything else (outbox, deliveries, audit, holds,
// rate-limit windows) must stay flat once retention runs.
import type { ProcessFigures, Sample, TableFigures } from './figures.js';

const MiB = 1024 * 1024;

/** What the run did up to a sample: the activity a table's growth may be explained by. */
export interface Activity {
  readonly keysCreated: number;
  /** Live requests answered 200 (each charged one credit). */
  readonly charged: number;
  readonly topUps: number;
}

/** A figure's tolerance: it may grow by `pct` % of its value at warm-up end, or by `abs`, whichever is more. */
export interface Tolerance {
  readonly pct: number;
  readonly abs: number;
}

export const TOLERANCES = {
  heap: { pct: 10, abs: 4 * MiB },
  external: { pct: 10, abs: 4 * MiB },
  // RSS moves with the allocator's whims by tens of MiB either way; heap and external are the precise figures.
  rss: { pct: 50, abs: 64 * MiB },
  rows: { pct: 25, abs: 20 },
  bytes: { pct: 50, abs: MiB },
} as const satisfies Record<string, Tolerance>;

// Tables that keep rows by design, and how many a key created, or a charge or top-up, may add.
const PER_KEY: readonly [RegExp, number][] = [
  [/^keygate_keys$|^key:|^hash:|^account:/, 1],
  // A key's last use: one row in SQL; in Redis one hash of two fields (`at`, `ip`), counted as two.
  [/activity/, 2],
  // One row per key, day and outcome (and route tag): a few outcomes each.
  [/usage/, 8],
];
const PER_CHARGE = /credit_entries|:entries$|:refs$/;

export interface FigureVerdict {
  readonly figure: string;
  readonly start: number;
  readonly end: number;
  readonly unit: 'bytes' | 'count';
  /** The most the figure may grow by: tolerance plus what the activity explains. */
  readonly allowed: number;
  /** Why it may grow (`flat`, `+1 per key created`...). */
  readonly basis: string;
  readonly flagged: boolean;
}

const allowance = (start: number, t: Tolerance) => Math.max((start * t.pct) / 100, t.abs);

function verdict(
  figure: string,
  start: number,
  end: number,
  unit: FigureVerdict['unit'],
  allowed: number,
  basis: string,
): FigureVerdict {
  return { figure, start, end, unit, allowed, basis, flagged: end - start > allowed };
}

function processVerdicts(from: readonly ProcessFigures[], to: readonly ProcessFigures[]): FigureVerdict[] {
  const out: FigureVerdict[] = [];
  for (const end of to) {
    const start = from.find((p) => p.name === end.name);
    if (!start) continue;
    const { heap, external, rss } = TOLERANCES;
    out.push(
      verdict(`${end.name} heap used`, start.heapUsed, end.heapUsed, 'bytes', allowance(start.heapUsed, heap), 'flat'),
      verdict(
        `${end.name} external`,
        start.external,
        end.external,
        'bytes',
        allowance(start.external, external),
        'flat',
      ),
      verdict(`${end.name} RSS`, start.rss, end.rss, 'bytes', allowance(start.rss, rss), 'flat'),
    );
  }
  return out;
}

function tableVerdicts(from: readonly TableFigures[], to: readonly TableFigures[], grown: Activity): FigureVerdict[] {
  const out: FigureVerdict[] = [];
  const names = new Set([...from.map((t) => t.name), ...to.map((t) => t.name)]);
  for (const name of names) {
    const start = from.find((t) => t.name === name) ?? { name, rows: 0, bytes: 0 };
    const end = to.find((t) => t.name === name) ?? { name, rows: 0, bytes: 0 };
    const perKey = PER_KEY.find(([pattern]) => pattern.test(name));
    let explained = 0;
    let basis = 'flat';
    if (perKey) {
      explained = grown.keysCreated * perKey[1];
      basis = `+${perKey[1]} per key created (${grown.keysCreated})`;
    } else if (PER_CHARGE.test(name)) {
      explained = grown.charged + grown.topUps;
      basis = `+1 per charge or top-up (${grown.charged + grown.topUps})`;
    }
    out.push(
      verdict(`${name} rows`, start.rows, end.rows, 'count', allowance(start.rows, TOLERANCES.rows) + explained, basis),
    );
    // Sizes follow rows where rows may grow; where they must not, the size must not either.
    if (basis === 'flat') {
      out.push(
        verdict(`${name} size`, start.bytes, end.bytes, 'bytes', allowance(start.bytes, TOLERANCES.bytes), 'flat'),
      );
    }
  }
  return out;
}

/**
 * Every figure's verdict between the sample at warm-up end and the last one, given the activity at
 * each, and the connection ceiling (the most connections the run's pools may open).
 *
 * @example
 * const verdicts = judge(warm, last, warmActivity, lastActivity, 12);
 */
export function judge(
  warm: Sample,
  last: Sample,
  warmActivity: Activity,
  lastActivity: Activity,
  connectionCeiling: number,
): FigureVerdict[] {
  const grown: Activity = {
    keysCreated: lastActivity.keysCreated - warmActivity.keysCreated,
    charged: lastActivity.charged - warmActivity.charged,
    topUps: lastActivity.topUps - warmActivity.topUps,
  };
  const connections = verdict(
    'connections of the run',
    warm.connections.ours,
    last.connections.ours,
    'count',
    Math.max(0, connectionCeiling - warm.connections.ours),
    `at most ${connectionCeiling} (the pools' maximum)`,
  );
  return [
    ...processVerdicts(warm.processes, last.processes),
    connections,
    ...tableVerdicts(warm.tables, last.tables, grown),
  ];
}
