import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startService } from '../support/service-process.js';
import { ensureBuilt, keygate } from './support/keygate.js';

// The CLI and the example service on one embedded store folder. PGlite has no
// server between processes; a second process on the folder used to "succeed" and lose its writes.
const root = mkdtempSync(join(tmpdir(), 'keygate-cli-lock-'));
const services: ServiceProcess[] = [];

beforeAll(ensureBuilt, 120_000);
afterAll(async () => {
  for (const service of services) await service.stop();
  rmSync(root, { recursive: true, force: true });
});

async function serviceOn(dir: string): Promise<ServiceProcess> {
  const service = await startService(dir);
  services.push(service);
  return service;
}

/** The demo live key the service printed on its first start, and its id as the service reports it. */
async function demoKey(service: ServiceProcess): Promise<{ secret: string; id: string }> {
  const secret = await service.waitFor(/^mk_live_[0-9A-Za-z]{38}$/m);
  const res = await fetch(`${service.url}/v1/account`, { headers: { 'x-api-key': secret } });
  expect(res.status).toBe(200);
  return { secret, id: (await res.json()).key.id };
}

describe('an embedded store folder has one writer', () => {
  it('keys revoke against the folder a running service holds exits 1 (store_locked) and changes nothing', async () => {
    const dir = join(root, 'held');
    const where = { store: `pglite:${dir}`, cwd: root };
    const service = await serviceOn(dir);
    const { secret, id } = await demoKey(service);

    const revoke = await keygate(where, 'keys', 'revoke', id, '--yes', '--json');
    expect(revoke.code).toBe(1);
    expect(revoke.stdout).toBe('');
    expect(JSON.parse(revoke.stderr).error).toMatchObject({
      code: 'store_locked',
      field: 'store',
      holderPid: service.child.pid,
    });
    const human = await keygate(where, 'keys', 'revoke', id, '--yes');
    expect(human.code).toBe(1);
    expect(human.stderr).toContain(`process ${service.child.pid}`);
    expect(human.stderr).toMatch(/postgres:\/\/.*redis:\/\//);

    // The key still works while the service runs, and after it stops the store says active: the CLI
    // claimed nothing it did not do.
    const res = await fetch(`${service.url}/v1/account`, { headers: { 'x-api-key': secret } });
    expect(res.status).toBe(200);
    await service.stop();
    const show = await keygate(where, 'keys', 'show', id, '--json');
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout)).toMatchObject({ id, status: 'active' });

    // With the folder free, the revocation is real and survives the service's next start.
    expect((await keygate(where, 'keys', 'revoke', id, '--yes')).code).toBe(0);
    const again = await serviceOn(dir);
    const denied = await fetch(`${again.url}/v1/account`, { headers: { 'x-api-key': secret } });
    expect(denied.status).toBe(401);
    await again.stop();
  }, 180_000);

  it('a stale lock left by a killed service blocks neither the CLI nor a restart', async () => {
    const dir = join(root, 'killed');
    const where = { store: `pglite:${dir}`, cwd: root };
    const service = await serviceOn(dir);
    service.child.kill('SIGKILL');
    await service.stop();

    const list = await keygate(where, 'keys', 'list', '--account', 'acct_demo', '--json');
    expect(list.code).toBe(0);
    expect(Array.isArray(JSON.parse(list.stdout))).toBe(true);
    const restarted = await serviceOn(dir);
    expect(restarted.output()).toContain('service on');
    await restarted.stop();
  }, 180_000);
});
