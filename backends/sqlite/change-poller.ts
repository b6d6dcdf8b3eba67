import { type KeyChange, parseChange } from 'keygate/store-kit';
import { CHANGE_SQL } from '../sql/sqlite/keys.js';
import type { SqliteDriver } from './driver.js';

/** What a poller reports to the store. */
export interface PollHandlers {
  /** A change written by any process, in the order the writes committed. */
  onChange(change: KeyChange): void;
  /**
   * The poller may have missed changes (it starts, its rows were pruned before it read them, or it
   * reads again after failing): whoever keeps copies of records must drop them.
   */
  onResync(): void;
  /** A poll failed; the next one is already scheduled. */
  onError(err: unknown): void;
}

// Rows per poll: a burst larger than this is read over several polls, each right after the other.
const BATCH = 500;

/**
 * Reads the change table every `intervalMs` milliseconds from the last sequence number it saw. SQLite
 * has one writer at a time and numbers rows inside the write transaction, so rows commit in sequence
 * order and a poller never skips one that commits late; a gap in the sequence means rows were pruned
 * unread, which becomes a resync. The timer is unref'd: it never keeps a process alive.
 *
 * @example
 * const stop = pollChanges(driver, 250, { onChange, onResync, onError });
 */
export function pollChanges(driver: SqliteDriver, intervalMs: number, handlers: PollHandlers): () => void {
  let cursor: number | undefined;
  let failed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const poll = () => {
    timer = undefined;
    let more = false;
    try {
      if (cursor === undefined) {
        cursor = Number(driver.get<{ seq: number }>(CHANGE_SQL.latest)?.seq ?? 0);
        handlers.onResync();
      } else {
        more = read();
      }
      if (failed) {
        failed = false;
        handlers.onResync();
      }
    } catch (err) {
      failed = true;
      handlers.onError(err);
    }
    if (!stopped) {
      timer = setTimeout(poll, more ? 0 : intervalMs);
      (timer as { unref?: () => void }).unref?.();
    }
  };

  // Delivers the rows after the cursor; true when a full batch came (there may be more).
  const read = (): boolean => {
    const rows = driver.all<{ seq: number; change: string }>(CHANGE_SQL.after, [cursor, BATCH]);
    if (rows.length === 0) return false;
    if (Number(rows[0]?.seq) !== (cursor as number) + 1) handlers.onResync();
    for (const row of rows) {
      cursor = Number(row.seq);
      const change = parseChange(row.change);
      if (change) handlers.onChange(change);
    }
    return rows.length === BATCH;
  };

  poll();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
