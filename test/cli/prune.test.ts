// `keygate audit prune`, `keygate usage prune` and `keygate webhooks prune`: the retention an operator
// runs from a scheduler, on a SQLite file the test also opens directly to write rows of 2001.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { capabilityOf } from 'keygate';
import { SqliteKeyStore } from 'keygate/sqlite';
import type { AuditLog, Outbox, UsageStore } from 'keygate/store-kit';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-prune-'));
let file = '';
let made = 0;
const OLD = '2001-01-01T00:00:00.000Z';

afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeEach(async () => {
  file = join(dir, `keys-${++made}.db`);
  await new SqliteKeyStore({ database: new Database(file) }).migrate();
});

async function cli(argv: string[], confirm?: (question: string) => Promise<boolean>) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--store', `sqlite:${file}`], {
    env: {},
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
    ...(confirm && { confirm }),
  });
  return { code, stdout, stderr };
}

function parts() {
  const store = new SqliteKeyStore({ database: new Database(file) });
  return {
    audit: capabilityOf(store, 'audit') as AuditLog,
    usage: capabilityOf(store, 'usage') as UsageStore,
    outbox: capabilityOf(store, 'outbox') as Outbox,
  };
}

async function auditOf(at: string) {
  return parts().audit.append({ at, accountId: 'acct_1', action: 'key.updated', actor: { type: 'cli', id: 'ops' } });
}

describe('keygate audit prune', () => {
  it('deletes the entries older than --older-than with --yes, and prints how many', async () => {
    await auditOf(OLD);
    const recent = await auditOf(new Date().toISOString());
    const run = await cli(['audit', 'prune', '--older-than', '400d', '--yes']);
    expect([run.code, run.stdout]).toEqual([0, 'deleted 1 audit entries older than 400d\n']);
    expect(await parts().audit.list({ accountId: 'acct_1' })).toEqual([recent]);
    const json = await cli(['audit', 'prune', '--older-than', '400d', '--yes', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ deleted: 0, olderThanMs: 400 * 86_400_000 });
  });

  it('asks first on a terminal, needs --yes elsewhere, and needs --older-than, deleting nothing until then', async () => {
    const old = await auditOf(OLD);
    const asked: string[] = [];
    const no = await cli(['audit', 'prune', '--older-than', '400d'], async (question) => {
      asked.push(question);
      return false;
    });
    expect(no.code).toBe(1);
    expect(asked).toEqual(['Delete every audit entry older than 400d, of every account? [y/N] ']);
    const scripted = await cli(['audit', 'prune', '--older-than', '400d', '--json']);
    expect([scripted.code, JSON.parse(scripted.stderr).error]).toEqual([
      1,
      expect.objectContaining({ field: '--yes' }),
    ]);
    const bare = await cli(['audit', 'prune', '--yes', '--json']);
    expect([bare.code, JSON.parse(bare.stderr).error]).toEqual([
      1,
      expect.objectContaining({ code: 'invalid_input', field: '--older-than' }),
    ]);
    const unitless = await cli(['audit', 'prune', '--older-than', '400', '--yes', '--json']);
    expect(JSON.parse(unitless.stderr).error).toMatchObject({ field: '--older-than' });
    expect(await parts().audit.list({ accountId: 'acct_1' })).toEqual([old]);
    const yes = await cli(['audit', 'prune', '--older-than', '400d'], async () => true);
    expect([yes.code, yes.stdout]).toEqual([0, 'deleted 1 audit entries older than 400d\n']);
  });
});

describe('keygate usage prune', () => {
  it("deletes every key's counts of the days older than --older-than; `usage ID` still reads a key", async () => {
    const { usage } = parts();
    const created = await cli(['keys', 'create', '--account', 'acct_1', '--name', 'ci', '--mode', 'test', '--json']);
    const keyId = JSON.parse(created.stdout).key.id as string;
    const today = new Date().toISOString().slice(0, 10);
    const count = (day: string) => ({
      keyId,
      accountId: 'acct_1',
      day,
      outcome: 'allowed' as const,
      count: 2,
    });
    await usage.addUsage({ counts: [count('2001-01-01'), count('2001-01-02'), count(today)], activity: [] });
    const run = await cli(['usage', 'prune', '--older-than', '400d']);
    expect([run.code, run.stdout]).toEqual([0, 'deleted 2 usage counts older than 400d\n']);
    expect((await usage.getUsage(keyId, '2000-01-01', '2100-01-01')).map((c) => c.day)).toEqual([today]);
    const read = await cli(['usage', keyId, '--json']);
    expect([read.code, JSON.parse(read.stdout).allowed]).toEqual([0, 2]);
  });
});

describe('keygate webhooks prune', () => {
  it('deletes the events that ended longer ago than --older-than, with their deliveries', async () => {
    const { outbox } = parts();
    await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://hooks.example.com/k' });
    await outbox.publish({ type: 'key.revoked', accountId: 'acct_1', at: OLD });
    const [claimed] = await outbox.claim({ nowMs: Date.parse(OLD), leaseMs: 1_000 });
    await outbox.complete({
      deliveryId: claimed?.delivery.id as string,
      leaseToken: claimed?.leaseToken as string,
      nowMs: Date.parse(OLD),
    });
    await outbox.publish({ type: 'key.revoked', accountId: 'acct_1', at: OLD }); // pending: stays
    const run = await cli(['webhooks', 'prune', '--older-than', '7d']);
    expect([run.code, run.stdout]).toEqual([0, 'deleted 2 events and deliveries older than 7d\n']);
    expect((await outbox.deliveries({ accountId: 'acct_1' })).map((d) => d.status)).toEqual(['pending']);
  });
});

describe('--help', () => {
  it('lists the prune commands beside the ones whose words they begin with', async () => {
    const help = (await cli(['--help'])).stdout;
    for (const line of [
      'keygate usage prune --older-than DURATION',
      'keygate audit prune --older-than DURATION [--yes]',
      'keygate webhooks prune --older-than DURATION',
    ]) {
      expect(help).toContain(line);
    }
  });
});
