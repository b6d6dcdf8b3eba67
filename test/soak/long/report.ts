// The soak's report: progress lines while it runs, and a markdown section per store (requests by
// status, every figure from warm-up end to the end with its verdict, the store's contents, the
// checks), ready to paste into the docs.
import type { BackendName } from './backends.js';
import type { Sample } from './figures.js';
import type { BillingRow, LedgerWatch } from './ledger-checks.js';
import type { ReceiverTally } from './receiver.js';
import type { PrunePart } from './retention.js';
import type { TrafficTally } from './traffic.js';
import { type FigureVerdict, TOLERANCES } from './verdict.js';
import type { WorkerStats } from './workers.js';

export interface RunSettings {
  readonly minutes: number;
  readonly warmupMinutes: number;
  readonly workers: number;
  readonly rps: number;
  readonly concurrency: number;
  readonly keepMs: number;
  readonly pruneMs: number;
  readonly changeMs: number;
}

export interface StoreResult {
  readonly backend: BackendName;
  readonly settings: RunSettings;
  readonly startedAt: string;
  readonly elapsedMs: number;
  readonly samples: readonly Sample[];
  readonly verdicts: readonly FigureVerdict[];
  readonly connectionCeiling: number;
  readonly traffic: TrafficTally;
  readonly changes: ReadonlyMap<string, number>;
  readonly webhooks: ReceiverTally & { missing: number; missingExamples: string[]; drainMs: number };
  readonly dispatched: WorkerStats['dispatched'];
  readonly retention: readonly PrunePart[];
  readonly ledger: Pick<LedgerWatch, 'checks' | 'lowestBalance' | 'failures'>;
  readonly billing: readonly BillingRow[];
  readonly uncharged: number;
  readonly background: readonly { name: string; failures: number; lastError?: string }[];
  /** Broken invariants, one line each. */
  readonly failures: readonly string[];
}

const TITLES: Record<BackendName, string> = { postgres: 'PostgreSQL', redis: 'Redis' };
const n = (v: number) => Math.round(v).toLocaleString('en-US');
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const kib = (bytes: number) => (bytes >= 1024 * 1024 ? mib(bytes) : `${(bytes / 1024).toFixed(0)} KiB`);
const clock = (ms: number) => {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
const value = (v: number, unit: FigureVerdict['unit']) => (unit === 'bytes' ? kib(v) : n(v));
const signed = (v: number, unit: FigureVerdict['unit']) => `${v >= 0 ? '+' : '-'}${value(Math.abs(v), unit)}`;

/**
 * One progress line: time, rate, each process's heap, the run's connections, the store's rows.
 *
 * @example
 * console.log(progressLine('postgres', sample, sent));
 */
export function progressLine(backend: BackendName, sample: Sample, sent: number): string {
  const heaps = sample.processes.map((p) => `${p.name.replace('worker ', 'w')} ${mib(p.heapUsed)}`).join(', ');
  const rows = sample.tables.reduce((sum, t) => sum + t.rows, 0);
  const biggest = [...sample.tables]
    .sort((a, b) => b.rows - a.rows)
    .slice(0, 4)
    .map((t) => `${t.name} ${n(t.rows)}`)
    .join(', ');
  return `[${backend} ${clock(sample.atMs)} ${sample.label}] ${n((sent * 1000) / Math.max(1, sample.atMs))} req/s; heap ${heaps}; connections ${sample.connections.ours}; rows ${n(rows)} (${biggest})`;
}

function requestsTable(t: TrafficTally): string[] {
  const lines = ['| group | requests | statuses |', '|---|---|---|'];
  for (const [group, statuses] of t.byGroup) {
    const total = [...statuses.values()].reduce((a, b) => a + b, 0);
    const list = [...statuses.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, count]) => `${status.trim()}: ${n(count)}`)
      .join(', ');
    lines.push(`| ${group} | ${n(total)} | ${list || '-'} |`);
  }
  return lines;
}

function figuresTable(verdicts: readonly FigureVerdict[]): string[] {
  const lines = ['| figure | warm-up end | end | growth | may grow by | basis | |', '|---|---|---|---|---|---|---|'];
  for (const v of verdicts) {
    const growth = v.end - v.start;
    const pct = v.start > 0 ? ` (${growth >= 0 ? '+' : ''}${((growth / v.start) * 100).toFixed(1)} %)` : '';
    lines.push(
      `| ${v.figure} | ${value(v.start, v.unit)} | ${value(v.end, v.unit)} | ${signed(growth, v.unit)}${pct} | ${value(v.allowed, v.unit)} | ${v.basis} | ${v.flagged ? '**grew**' : 'flat'} |`,
    );
  }
  return lines;
}

function contentsTable(sample: Sample, backend: BackendName): string[] {
  const redis = backend === 'redis';
  const lines = redis
    ? ['| key pattern | keys | entries | memory |', '|---|---|---|---|']
    : ['| table | rows | size |', '|---|---|---|'];
  for (const t of sample.tables) {
    lines.push(
      redis
        ? `| \`${t.name}\` | ${n(t.keys ?? 0)} | ${n(t.rows)} | ${kib(t.bytes)} |`
        : `| ${t.name} | ${n(t.rows)} | ${kib(t.bytes)} |`,
    );
  }
  return lines;
}

/** Responses with a 5xx status. */
export const serverErrors = (t: TrafficTally) =>
  [...t.byStatus.entries()].filter(([status]) => status >= 500).reduce((sum, [, count]) => sum + count, 0);

/**
 * The markdown section of one store's run.
 *
 * @example
 * await writeFile('soak-report.md', storeSection(result));
 */
export function storeSection(r: StoreResult): string {
  const s = r.settings;
  const warm = r.samples.find((x) => x.label === 'warm-up end');
  const last = r.samples[r.samples.length - 1] as Sample;
  const t = r.traffic;
  const flagged = r.verdicts.filter((v) => v.flagged);
  const pruned = r.retention
    .map((p) =>
      p.present ? `${p.name}: yes (${p.runs} runs, ${n(p.removed)} removed, ${p.failures} failed)` : `${p.name}: no`,
    )
    .join('; ');
  const changes = [...r.changes.entries()].map(([action, count]) => `${action} ${n(count)}`).join(', ');
  const byType = [...r.webhooks.byType.entries()].map(([type, count]) => `${type} ${n(count)}`).join(', ');
  const out = [
    `### ${TITLES[r.backend]}`,
    '',
    `Run of ${r.startedAt}: ${(r.elapsedMs / 60_000).toFixed(1)} min of traffic (${s.warmupMinutes} min warm-up), ${s.workers} Express workers, ` +
      `${s.rps} requests/s asked (${n((t.sent * 1000) / r.elapsedMs)}/s sent, at most ${s.concurrency} in flight, ${n(t.saturated)} not sent for want of room), ` +
      `a key change every ${s.changeMs / 1000} s, Node ${process.version}. Retention: prune every ${s.pruneMs / 1000} s keeping ${s.keepMs / 60_000} min.`,
    '',
    `\`prune\` present: ${pruned}.`,
    '',
    '#### Requests',
    '',
    ...requestsTable(t),
    '',
    `By status: ${[...t.byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}: ${n(count)}`)
      .join(', ')}.`,
    '',
    '#### Figures from warm-up end to the end',
    '',
    `Heap and external memory after a full GC. Tolerances: heap +${TOLERANCES.heap.pct} % or ${mib(TOLERANCES.heap.abs)}, external +${TOLERANCES.external.pct} % or ${mib(TOLERANCES.external.abs)}, RSS +${TOLERANCES.rss.pct} % or ${mib(TOLERANCES.rss.abs)}, ` +
      `rows +${TOLERANCES.rows.pct} % or ${TOLERANCES.rows.abs} (plus what the run's activity explains), sizes +${TOLERANCES.bytes.pct} % or ${mib(TOLERANCES.bytes.abs)}, whichever is more; ` +
      `connections at most ${r.connectionCeiling}. Samples were taken right after a prune pass.`,
    '',
    ...figuresTable(r.verdicts),
    '',
    ...(warm ? [] : ['(no warm-up sample: the run ended first)', '']),
    `#### Store contents at the end`,
    '',
    ...contentsTable(last, r.backend),
    '',
    ...(last.redis
      ? [
          `DBSIZE ${n(last.redis.dbsize)}; the server's used_memory ${mib(last.redis.usedMemory)} (shared with anything else on it).`,
          '',
        ]
      : []),
    `Connections: the run's ${last.connections.ours}, everyone's ${last.connections.everyone}.`,
    '',
    '#### Checks',
    '',
    `- Requests: ${n(t.sent)} sent, ${n(t.unexpected)} with an unexpected status, ${n(t.networkErrors)} network errors, ` +
      `${n(serverErrors(t))} 5xx.`,
    `- Key changes: ${changes}; requests allowed later than 1 s after their key was taken out of service: ${n(t.lateAllows)}.`,
    `- Ledger: reconcile() ok at ${n(r.ledger.checks - r.ledger.failures.length)} of ${n(r.ledger.checks)} account checks; lowest balance seen ${n(r.ledger.lowestBalance)}. Leased slices left uncharged: ${n(r.uncharged)}.`,
    `- Billing at the end (live 200s against credits charged): ${r.billing
      .map(
        (b) =>
          `${b.account} (${b.route}) ${n(b.served)} / ${n(b.charged)}${b.held ? `, ${n(b.held)} still held` : ''}${b.ok ? '' : ' **MISMATCH**'}`,
      )
      .join('; ')}.`,
    `- Webhooks: ${n(r.webhooks.delivered)} events delivered (${byType}), ${n(r.webhooks.refused)} attempts refused on purpose and retried, ` +
      `${n(r.webhooks.duplicates)} duplicates, ${n(r.webhooks.badSignatures)} bad signatures; key changes whose event never arrived: ${n(r.webhooks.missing)} ` +
      `(waited ${(r.webhooks.drainMs / 1000).toFixed(1)} s for them after traffic stopped). Dispatchers: ${n(r.dispatched.failed)} failed attempts, ${n(r.dispatched.gaveUp)} gave up, ${n(r.dispatched.errors)} errors.`,
    `- Background tasks: ${r.background.map((b) => `${b.name} ${b.failures} failed${b.lastError ? ` (${b.lastError})` : ''}`).join(', ')}.`,
    '',
    `**Verdict: ${flagged.length === 0 ? 'flat' : `${flagged.length} figure(s) grew: ${flagged.map((v) => v.figure).join(', ')}`}; ` +
      `${r.failures.length === 0 ? 'every check held' : `${r.failures.length} check(s) failed`}.**`,
    ...r.failures.map((f) => `- ${f}`),
    ...(t.examples.length ? ['', 'Examples:', ...t.examples.map((e) => `- ${e}`)] : []),
    '',
  ];
  return out.join('\n');
}
