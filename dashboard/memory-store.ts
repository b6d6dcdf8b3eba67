import type { MemoryKeyStore } from 'keygate';
import {
  type DailyTotal,
  type DashboardStore,
  dailyTotals,
  type KeyActivity,
  type KeyPage,
  type KeyPageQuery,
  pageOfKeys,
} from 'keygate/store-kit';
import { TokenLedger } from './token-ledger.js';

/**
 * The dashboard's store over a `MemoryKeyStore`: pages of the key list and usage read through the
 * key store's public methods (`listByAccount`, `getUsage`, `getActivity`), and the single-use tokens
 * in this process's memory. Right wherever a `MemoryKeyStore` is: one process, nothing kept across
 * restarts. `dashboard()` makes one by itself when the manager's store is a `MemoryKeyStore` (also
 * under a `CachedKeyStore`); pass one yourself to share its tokens between dashboards.
 *
 * @example
 * const keyStore = new MemoryKeyStore();
 * const ui = dashboard({ manager: new KeyManager({ store: keyStore }), store: new MemoryDashboardStore(keyStore), secret });
 */
export class MemoryDashboardStore implements DashboardStore {
  private readonly tokens = new TokenLedger();

  /** `keys`: the key store whose records and usage the dashboard shows. */
  constructor(private readonly keys: MemoryKeyStore) {}

  async listKeysPage(accountId: string, query: KeyPageQuery): Promise<KeyPage> {
    return pageOfKeys(await this.keys.listByAccount(accountId), query);
  }

  async getDailyTotalsOfKeys(keyIds: readonly string[], from: string, to: string): Promise<DailyTotal[]> {
    return dailyTotals((await Promise.all(keyIds.map((id) => this.keys.getUsage(id, from, to)))).flat());
  }

  async getActivityOfKeys(keyIds: readonly string[]): Promise<KeyActivity[]> {
    const found = await Promise.all(keyIds.map((id) => this.keys.getActivity(id)));
    return found.filter((activity) => activity !== null);
  }

  async markTokenUsed(tokenId: string, expiresAt: string): Promise<boolean> {
    return this.tokens.mark(tokenId, expiresAt);
  }

  async isTokenUsed(tokenId: string): Promise<boolean> {
    return this.tokens.has(tokenId);
  }
}
