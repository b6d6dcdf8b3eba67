// `keygate leaks drill`: a report signed like GitHub's, replayed against the example service started
// with KEYGATE_LEAKS_PUBLIC_KEYS_URL pointing at the drill's own public keys.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startService } from '../support/service-process.js';
import { BIN, ensureBuilt, type Run } from './support/keygate.js';

const root = mkdtempSync(join(tmpdir(), 'keygate-cli-leaks-'));
let service: ServiceProcess;
let keysPort = 0;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function drill(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'leaks', 'drill', '--keys-port', String(keysPort), ...args],
      { cwd: root, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  ensureBuilt();
  keysPort = await freePort();
  const before = process.env.KEYGATE_LEAKS_PUBLIC_KEYS_URL;
  // The service inherits the environment: it trusts the keys the drill will serve on that port.
  process.env.KEYGATE_LEAKS_PUBLIC_KEYS_URL = `http://127.0.0.1:${keysPort}/`;
  try {
    service = await startService(join(root, 'data'));
  } finally {
    if (before === undefined) delete process.env.KEYGATE_LEAKS_PUBLIC_KEYS_URL;
    else process.env.KEYGATE_LEAKS_PUBLIC_KEYS_URL = before;
  }
}, 120_000);

afterAll(async () => {
  await service?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('keygate leaks drill', () => {
  it("reports the service's live key: true_positive, the key suspended; a second drill within the minute is 401", async () => {
    const live = await service.waitFor(/^(mk_live_\w+)$/m);
    expect(live).toBeDefined();
    const account = () => fetch(`${service.url}/v1/account`, { headers: { 'x-api-key': live } });
    expect((await account()).status).toBe(200);

    const run = await drill('--url', `${service.url}/github/secret-scanning`, '--token', live, '--json');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ status: 200, keysFetched: 1, answer: [{ label: 'true_positive' }] });
    expect(run.stdout + run.stderr).not.toContain(live);
    const denied = await account();
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ code: 'key_suspended' });
    expect(service.output()).toMatch(/reported leaked at https:\/\/github\.com\/keygate\/leaks-drill\S*: suspend/);

    // A new key pair, a new key id: the service does not fetch keys again within its minute.
    const again = await drill('--url', `${service.url}/github/secret-scanning`);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain(': 401');
    expect(again.stdout).toContain('KEYGATE_LEAKS_PUBLIC_KEYS_URL');
  });

  it('refuses a --url that is not http(s)', async () => {
    const run = await drill('--url', 'ftp://example.com/');
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('--url');
  });
});
