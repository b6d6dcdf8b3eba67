import {
  type AuthResult,
  authenticate,
  CachedKeyStore,
  capabilityOf,
  KeyManager,
  type WritableKeyStore,
} from 'keygate';

interface Gap {
  /** The store whose change channel is cut; a cache over it holds the key. */
  store: WritableKeyStore;
  /** Another instance (another process) on the same data, reached while `store` is cut off. */
  peer: WritableKeyStore;
  cut(): Promise<void>;
  restore(): Promise<void>;
  /** How long to wait for the refusal once restored, in milliseconds. */
  patienceMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const refused = (result: AuthResult) => !result.ok && result.code === 'revoked_api_key';

/** Resolves once `store`'s channel delivers a change written through `peer`: the channel is live. */
async function channelLive(store: WritableKeyStore, peer: KeyManager, patienceMs: number): Promise<void> {
  const probe = await peer.create({ accountId: 'acct_gap', name: 'probe', mode: 'test' });
  let seen = false;
  const off = capabilityOf(store, 'changes')?.subscribe((c) => {
    if (c.type !== 'resync' && c.id === probe.key.id) seen = true;
  });
  for (let i = 0; !seen && i * 50 < patienceMs; i++) {
    await peer.update(probe.key.id, { name: `probe ${i}` });
    await sleep(50);
  }
  off?.();
  if (!seen) throw new Error('the change channel never delivered');
}

/**
 * The reconnection-gap scenario: a cache over `store` holds an allowed key; the channel is cut; `peer` revokes
 * the key during the gap (so the cache never hears of it); the channel is restored. Returns what the
 * cache answered during the gap, its first refusal as revoked after the restore (or its last answer,
 * when `patienceMs` ran out) and the milliseconds from the restore to that answer.
 */
export async function revokeDuringGap(gap: Gap): Promise<{ duringGap: AuthResult; after: AuthResult; ms: number }> {
  const peerKeys = new KeyManager({ store: gap.peer });
  const { secret, key } = await peerKeys.create({ accountId: 'acct_gap', name: 'victim', mode: 'live' });
  const cached = new CachedKeyStore(gap.store, { ttlMs: 60_000 });
  const auth = () => authenticate({ headers: { 'x-api-key': secret } }, cached, { timeoutMs: 500 });
  try {
    await channelLive(gap.store, peerKeys, gap.patienceMs);
    if (!(await auth()).ok) throw new Error('the key should authenticate before the gap');
    await gap.cut();
    await peerKeys.revoke(key.id);
    const duringGap = await auth();
    const restoredAt = performance.now();
    await gap.restore();
    let after = await auth();
    while (!refused(after) && performance.now() - restoredAt < gap.patienceMs) {
      await sleep(10);
      after = await auth();
    }
    return { duringGap, after, ms: performance.now() - restoredAt };
  } finally {
    cached.close();
  }
}
