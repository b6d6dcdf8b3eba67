import { type KeyChange, parseChange } from 'keygate/store-kit';

/**
 * A change table as the poller reads it: the newest sequence number, and the rows after a number
 * (the change as JSON text), in commit order.
 *
 * @example
 * const feed: ChangeFeed = { latest: async () => 0, after: async () => [] };
 */
export interface ChangeFeed {
  latest(): Promise<number>;
  after(cursor: number, limit: number): Promise<{ seq: number | string; change: unknown }[]>;
  /** Deletes old rows; run at most once per `pruneEveryMs`. */
  prune?(): Promise<unknown>;
}

/**
 * What a poller reports to the store.
 *
 * @example
 * const handlers: PollHandlers = { onChange: (c) => relay.emit(c), onResync: () => relay.emit({ type: 'resync' }), onError };
 */
export interface PollHandlers {
  /** A change written by any process, in the order the writes committed. */
  onChange(change: KeyChange): void;
  /**
   * The poller may have missed changes (it starts, or rows it had not read were pruned): whoever keeps
   * copies of records must drop them.
   */
  onResync(): void;
  /** A poll failed; the next one is already scheduled, from where the last good one ended. */
  onError(err: unknown): void;
}

/**
 * How a poller paces itself: milliseconds between polls, the longest pause after failures (doubling
 * from `intervalMs`), whether the first good poll after a failure reports a resync, and how often it prunes.
 *
 * @example
 * const pace: PollPace = { intervalMs: 500, maxBackoffMs: 5_000, resyncAfterFailure: false, pruneEveryMs: 60_000 };
 */
export interface PollPace {
  intervalMs: number;
  maxBackoffMs: number;
  resyncAfterFailure: boolean;
  pruneEveryMs?: number;
}

// Rows per poll: a burst larger than this is read over several polls, each right after the other.
const PAGE = 500;

/**
 * Reads a change table from the newest row it finds, then every `intervalMs` from where it left off,
 * and delivers each new row once, in commit order. Sequence numbers have no gaps (each engine numbers
 * rows so that none commits behind one already read): a gap means rows were pruned unread, which
 * becomes a resync. A failed poll keeps its place. The timer is unref'd: it never keeps a process alive.
 * Returns how to stop it; a poll under way then delivers nothing.
 *
 * @example
 * const stop = pollChanges(feed, { intervalMs: 250, maxBackoffMs: 250, resyncAfterFailure: true }, handlers);
 */
export function pollChanges(feed: ChangeFeed, pace: PollPace, handlers: PollHandlers): () => void {
  let cursor: number | undefined;
  let failures = 0;
  let lastPruneMs = 0;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  // Delivers the rows after the cursor; true when a full page came (there may be more).
  const read = async (): Promise<boolean> => {
    const from = cursor as number;
    const rows = await feed.after(from, PAGE);
    if (stopped || rows.length === 0) return false;
    if (Number(rows[0]?.seq) !== from + 1) handlers.onResync();
    for (const row of rows) {
      cursor = Number(row.seq);
      const change = parseChange(String(row.change));
      if (change) handlers.onChange(change);
    }
    return rows.length === PAGE;
  };

  const tick = async (): Promise<void> => {
    timer = undefined;
    let delayMs = pace.intervalMs;
    try {
      let full = false;
      if (cursor === undefined) {
        const latest = await feed.latest();
        if (stopped) return;
        cursor = latest;
        handlers.onResync();
      } else {
        full = await read();
      }
      if (failures > 0 && pace.resyncAfterFailure && !stopped) handlers.onResync();
      failures = 0;
      if (full) delayMs = 0;
      if (feed.prune && pace.pruneEveryMs !== undefined && Date.now() - lastPruneMs >= pace.pruneEveryMs) {
        lastPruneMs = Date.now();
        await feed.prune();
      }
    } catch (err) {
      if (stopped) return;
      handlers.onError(err);
      delayMs = Math.max(pace.intervalMs, Math.min(pace.maxBackoffMs, pace.intervalMs * 2 ** failures));
      failures++;
    }
    if (stopped) return;
    timer = setTimeout(() => void tick(), delayMs);
    (timer as { unref?: () => void }).unref?.();
  };

  void tick();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
