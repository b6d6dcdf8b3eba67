// What the crash tests check of an account after a process was killed among its key writes: every
// key change stored has its audit entry, and every entry its key change.
import type { ApiKeyRecord, AuditEntry, AuditLog, WritableKeyStore } from 'keygate';

const KEY_WRITES = new Set(['key.updated', 'key.suspended', 'key.resumed', 'key.revoked']);

/** Every entry of the account, oldest first. */
async function allEntries(log: AuditLog, accountId: string): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await log.list({ accountId, limit: 1_000, ...(before && { before }) });
    out.push(...page);
    if (page.length < 1_000) return out.reverse();
    before = page.at(-1)?.id;
  }
}

/**
 * The key changes of `accountId` without their audit entry, and the entries without their change,
 * each as a sentence (none: every change is recorded). A key's insert is recorded by `key.created` or
 * `key.imported`, or, for a rotation's successor, by the old key's `key.rotated` naming it; each later
 * write (version 2 onwards) by one entry of `key.updated`, `key.suspended`, `key.resumed` or
 * `key.revoked`, or, for a rotation's claim on the old key (its `rotatedTo`, and the grace's expiry),
 * by `key.rotated`, written with the claim: a successor that was never inserted (a process killed
 * between the two writes) leaves the claim recorded and names a key that is not stored. The last
 * status entry names the key's status.
 */
export async function unrecordedChanges(
  store: WritableKeyStore,
  log: AuditLog,
  accountId: string,
): Promise<{ problems: string[]; keys: number; entries: number }> {
  const keys = await store.listByAccount(accountId);
  const entries = await allEntries(log, accountId);
  const byId = new Map(keys.map((k) => [k.id, k]));
  const of = (id: string) => entries.filter((e) => e.keyId === id);
  const problems: string[] = [];
  for (const key of keys) {
    problems.push(...insertProblems(key, byId, entries));
    const writes = of(key.id).filter((e) => KEY_WRITES.has(e.action));
    const rotated = of(key.id).filter((e) => e.action === 'key.rotated');
    if (writes.length + rotated.length !== key.version - 1) {
      problems.push(`${key.id} (v${key.version}) has ${writes.length} write and ${rotated.length} key.rotated entries`);
    }
    if (key.rotatedTo !== null && rotated.at(-1)?.changes?.rotatedTo?.after !== key.rotatedTo) {
      problems.push(`${key.id}'s claim on ${key.rotatedTo} has no key.rotated entry`);
    }
    const statuses = writes.filter((e) => e.action !== 'key.updated');
    const last = statuses.at(-1)?.changes?.status?.after ?? 'active';
    if (last !== key.status) problems.push(`${key.id} is ${key.status}, its last status entry says ${last}`);
  }
  for (const entry of entries) {
    if (entry.keyId === undefined || !byId.has(entry.keyId)) problems.push(`${entry.action} ${entry.id} names no key`);
  }
  return { problems, keys: keys.length, entries: entries.length };
}

function insertProblems(key: ApiKeyRecord, byId: Map<string, ApiKeyRecord>, entries: AuditEntry[]): string[] {
  if (key.rotatedFrom === null) {
    const created = entries.filter(
      (e) => e.keyId === key.id && (e.action === 'key.created' || e.action === 'key.imported'),
    );
    return created.length === 1 ? [] : [`${key.id} has ${created.length} key.created/key.imported entries`];
  }
  const rotated = entries.filter(
    (e) => e.keyId === key.rotatedFrom && e.action === 'key.rotated' && e.changes?.rotatedTo?.after === key.id,
  );
  if (!byId.has(key.rotatedFrom)) return [`${key.id} was rotated from a key that is not stored`];
  return rotated.length === 1 ? [] : [`${key.id} (a successor) has ${rotated.length} key.rotated entries naming it`];
}
