import type { KeyChange, KeyChangeEvent } from '../types.js';

/**
 * A set of change listeners. A listener that throws is isolated: the others still run and the
 * write that announced the change still succeeds.
 *
 * @example
 * const feed = new ChangeFeed();
 * const off = feed.subscribe((c) => console.log(c.type));
 * feed.emit({ type: 'revoked', id, hash, accountId, version: 2 });
 */
export class ChangeFeed {
  private readonly listeners = new Set<(change: KeyChangeEvent) => void>();

  subscribe(listener: (change: KeyChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  emit(change: KeyChangeEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A subscriber's failure is its own; the write already happened.
      }
    }
  }
}

/**
 * The change a write to `record` announces: ids, digest and version, never a secret.
 *
 * @example
 * feed.emit(changeOf('revoked', next));
 */
export function changeOf(
  type: KeyChange['type'],
  record: { id: string; hash: string; accountId: string; version: number },
): KeyChange {
  return { type, id: record.id, hash: record.hash, accountId: record.accountId, version: record.version };
}
