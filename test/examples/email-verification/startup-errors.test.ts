// A start that cannot go on says why in one line that names the setting and the fix, and exits
// non-zero: a busy port, a DATABASE_URL PostgreSQL refuses or that names no user, one that is no
// PostgreSQL URL at all. Never the driver's stack.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPGliteFolder } from 'keygate/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../../cli/support/keygate.js';
import { PG_URL, RUN_ID, serviceAvailable } from '../../stores/support/services.js';
import { main } from './service.js';

const SERVER = join(ROOT, 'examples/email-verification/server.js');
let busy: Server;
let busyPort = 0;

beforeAll(async () => {
  busy = createServer().listen(0, '127.0.0.1');
  await once(busy, 'listening');
  busyPort = (busy.address() as { port: number }).port;
  ensureBuilt();
}, 120_000);
afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

/** `npm start`'s script in a child process, with `env` added; resolves when it exits. */
function startProcess(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [SERVER, ...args],
      { env: { ...process.env, HOST: '127.0.0.1', ...env }, cwd: ROOT, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
}

// No PostgreSQL listens on port 1: the connection is refused before any user or password is asked.
const REFUSED = 'postgres://127.0.0.1:1/keys';
const pgUp = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
/** The test server's address with `user` (none: '') and a database that does not exist, so nothing is ever written. */
function serverUrl(user: string) {
  const url = new URL(PG_URL);
  url.username = user;
  url.password = '';
  url.pathname = `/keygate_none_${RUN_ID}`;
  return url.href;
}

describe('npm start, when it cannot start', { timeout: 60_000 }, () => {
  it('a busy PORT is one line, "port N is in use: set PORT", and exit code 1', async () => {
    const run = await startProcess(['--memory'], { PORT: String(busyPort) });
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(`^port ${busyPort} is in use: set PORT`)]);
    expect(run.stdout).toBe('');
  });

  it.skipIf(!pgUp)(
    'a DATABASE_URL without a user is one line naming DATABASE_URL and a URL with one, and exit code 1',
    async () => {
      const url = serverUrl('');
      const run = await startProcess([], { PORT: '0', DATABASE_URL: url });
      expect(run.code).toBe(1);
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines).toEqual([
        expect.stringMatching(/^DATABASE_URL=\S+ names no user \(PostgreSQL: .+\): put one in it/),
      ]);
      expect(lines[0]).toContain(`e.g. DATABASE_URL=${url.replace('//', '//postgres@')}`);
    },
  );

  it('a data folder another process holds is one line saying what to do, and exit code 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keygate-email-held-'));
    const held = await openPGliteFolder(dir); // this test process plays the running service
    try {
      const run = await startProcess(['--data-dir', dir], { PORT: '0' });
      expect(run.code).toBe(1);
      expect(run.stderr.trimEnd().split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^${dir} is held by process ${process.pid} .*: stop that process first, or give this one another folder`,
          ),
        ),
      ]);
    } finally {
      await held.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a DATABASE_URL no server answers is one line naming DATABASE_URL, and exit code 1', async () => {
    const run = await startProcess([], { PORT: '0', DATABASE_URL: REFUSED });
    expect(run.code).toBe(1);
    expect(run.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        /^DATABASE_URL=postgres:\/\/127\.0\.0\.1:1\/keys could not be reached \(.*ECONNREFUSED.*\): start PostgreSQL/,
      ),
    ]);
  });
});

describe('main(), the settings it refuses', () => {
  it('a busy port: SettingError naming PORT', async () => {
    const started = main({ argv: ['--memory'], env: { PORT: String(busyPort) }, log: () => {} });
    await expect(started).rejects.toMatchObject({
      code: 'invalid_setting',
      setting: 'PORT',
      message: `port ${busyPort} is in use: set PORT to a free port (PORT=0 picks any)`,
    });
  });

  /** Starts main() on `url` and returns the message of the SettingError it must reject with: one line. */
  const refusal = async (url: string) => {
    const started = main({ argv: [], env: { PORT: '0', DATABASE_URL: url }, log: () => {} });
    await expect(started).rejects.toMatchObject({ code: 'invalid_setting', setting: 'DATABASE_URL' });
    const message = await started.then(
      () => '',
      (err: Error) => err.message,
    );
    expect(message).not.toContain('\n');
    return message;
  };

  it.skipIf(!pgUp).each([
    ['no user', '', /^DATABASE_URL=\S+ names no user \(PostgreSQL: .+\): put one in it, e\.g\. /],
    [
      'a user PostgreSQL does not know',
      `nobody_${RUN_ID}`,
      /^DATABASE_URL=\S+ did not work \(PostgreSQL: .+\): check its host, port, user, password and database/,
    ],
  ])('a DATABASE_URL with %s: SettingError naming DATABASE_URL, one line', async (_, user, message) => {
    expect(await refusal(serverUrl(user))).toMatch(message);
  });

  it('a DATABASE_URL no server answers: SettingError naming DATABASE_URL, one line', async () => {
    expect(await refusal(REFUSED)).toMatch(/^DATABASE_URL=\S+ could not be reached \(.+\): start PostgreSQL there/);
  });

  it('never prints the password of a DATABASE_URL', async () => {
    const message = await refusal('postgres://app:hunter2-secret@127.0.0.1:1/keys');
    expect(message).toContain('postgres://app:***@127.0.0.1:1/keys');
    expect(message).not.toContain('hunter2');
  });

  it.each([['mysql://app@db/keys'], ['127.0.0.1:5432'], ['postgres//app@db/keys']])(
    'a DATABASE_URL that is not a PostgreSQL URL (%s) is refused before anything opens',
    async (url) => {
      const started = main({ argv: [], env: { PORT: '0', DATABASE_URL: url }, log: () => {} });
      await expect(started).rejects.toMatchObject({ code: 'invalid_setting', setting: 'DATABASE_URL' });
    },
  );
});
