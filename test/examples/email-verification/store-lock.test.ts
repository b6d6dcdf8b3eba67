import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../cli/support/keygate.js';
import { type ServiceProcess, startService } from '../../support/service-process.js';
import { main } from './service.js';

// The service refuses to start on a PGlite folder another live
// process holds, instead of opening a second copy of the database whose writes one of them loses.
const root = mkdtempSync(join(tmpdir(), 'keygate-email-lock-'));
let holder: ServiceProcess | undefined;

beforeAll(ensureBuilt, 120_000);
afterAll(async () => {
  await holder?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('the example service on a PGlite folder', () => {
  it('refuses to start on a folder another live service holds (store_locked), and leaves it alone', async () => {
    const dir = join(root, 'held');
    holder = await startService(dir);
    const secret = await holder.waitFor(/^mk_test_[0-9A-Za-z]{38}$/m);

    const second = main({ argv: ['--data-dir', dir], env: { PORT: '0' }, log: () => {} });
    await expect(second).rejects.toMatchObject({ code: 'store_locked', holderPid: holder.child.pid });
    await expect(second).rejects.toThrow(`process ${holder.child.pid}`);

    const lock = JSON.parse(readFileSync(join(dir, 'keygate.lock'), 'utf8'));
    expect(lock.pid).toBe(holder.child.pid);
    const res = await fetch(`${holder.url}/v1/account`, { headers: { 'x-api-key': secret } });
    expect(res.status).toBe(200);

    // A graceful stop releases the folder; the next start takes it.
    await holder.stop();
    expect(existsSync(join(dir, 'keygate.lock'))).toBe(false);
    const third = await main({ argv: ['--data-dir', dir], env: { PORT: '0' }, log: () => {} });
    await third.close();
  }, 120_000);
});
