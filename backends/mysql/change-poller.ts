import type { Query, SqlClient } from './sql-client.js';

/** What the poller reports to the store. */
export interface PollHandlers {
  /** One change row's payload, in the order the changes committed. */
  onPayload(payload: string): void;
  /**
   * The poller starts from the newest change (first, and again once rows it had not read were pruned):
   * whoever keeps copies of records must drop them.
   */
  onResync(): void;
  /** A poll failed; the next one is already scheduled, from where the last good one ended. */
  onError(err: unknown): void;
}

/** Rows read per poll; a full page is followed at once by the next. */
const PAGE = 500;
/** How often one process deletes old change rows. */
const PRUNE_EVERY_MS = 60_000;
const MAX_BACKOFF_MS = 5_000;

/**
 * Reads the change table every `intervalMs` from where it left off, and delivers each new row once, in
 * commit order (numbers come from a counter whose row lock is held to COMMIT, so none commits behind
 * one already read). A change reaches this process within `intervalMs` plus one query of its commit.
 * A failed poll keeps its place (the rows wait in the table) and retries with backoff up to 5 s. Now
 * and then it deletes rows older than `retainMs`; a poller that was away longer than that finds a hole
 * in the numbers and reports a resync instead.
 *
 * @example
 * const poller = new ChangePoller(sql, 'keygate_', 500, 600_000, { onPayload, onResync, onError });
 * poller.start(); // ... poller.stop();
 */
export class ChangePoller {
  private cursor: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private failures = 0;
  private lastPruneMs = 0;

  constructor(
    private readonly sql: SqlClient,
    private readonly prefix: string,
    private readonly intervalMs: number,
    private readonly retainMs: number,
    private readonly handlers: PollHandlers,
  ) {}

  /** Takes the newest change as the starting point, reports a resync, then polls. */
  start(): void {
    void this.tick();
  }

  /** Stops for good; a poll under way finishes and delivers nothing. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    if (this.stopped) return;
    let delay = this.intervalMs;
    try {
      const full = this.cursor === undefined ? await this.begin() : await this.poll();
      this.failures = 0;
      if (full) delay = 0;
      await this.pruneNowAndThen();
    } catch (err) {
      if (this.stopped) return;
      this.handlers.onError(err);
      delay = Math.max(this.intervalMs, Math.min(MAX_BACKOFF_MS, this.intervalMs * 2 ** this.failures));
      this.failures++;
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), delay);
    // The pool's connections keep a process alive if the application wants them to; polling alone does not.
    this.timer.unref?.();
  }

  private async begin(): Promise<boolean> {
    const { rows } = await this.sql.query<{ seq: string | number }>(
      `SELECT seq FROM ${this.prefix}change_counter WHERE id = 1`,
    );
    if (this.stopped) return false;
    this.cursor = Number(rows[0]?.seq ?? 0);
    this.handlers.onResync();
    return false;
  }

  /** Delivers the rows after the cursor; true when a full page came (more may wait). */
  private async poll(): Promise<boolean> {
    const cursor = this.cursor ?? 0;
    const { rows } = await this.sql.query<{ seq: string | number; payload: string }>(
      `SELECT seq, payload FROM ${this.prefix}changes WHERE seq > ? ORDER BY seq LIMIT ${PAGE}`,
      [cursor],
    );
    if (this.stopped || rows.length === 0) return false;
    // Numbers have no gaps; one here means rows this poller never read were pruned.
    if (Number(rows[0]?.seq) !== cursor + 1) this.handlers.onResync();
    for (const row of rows) {
      this.cursor = Number(row.seq);
      this.handlers.onPayload(String(row.payload));
    }
    return rows.length === PAGE;
  }

  private async pruneNowAndThen(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPruneMs < PRUNE_EVERY_MS) return;
    this.lastPruneMs = now;
    await pruneChanges(this.sql.query, this.prefix, this.retainMs);
  }
}

/**
 * Deletes change rows older than `retainMs` (by the database's clock), at most 10,000 at a time; returns how many went.
 *
 * @example
 * await pruneChanges(sql.query, 'keygate_', 600_000);
 */
export async function pruneChanges(q: Query, prefix: string, retainMs: number): Promise<number> {
  const { affectedRows } = await q(
    `DELETE FROM ${prefix}changes WHERE at < UTC_TIMESTAMP(3) - INTERVAL ? MICROSECOND ORDER BY seq LIMIT 10000`,
    [Math.round(retainMs * 1000)],
  );
  return affectedRows;
}
