import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_CREDITS, fakeDns, main } from './service.js';

const KEY_LINE = /^mk_(test|live)_[0-9A-Za-z]{38}$/;

async function start(argv: string[], env: Record<string, string> = {}) {
  const lines: string[] = [];
  const started = await main({
    argv,
    env: { PORT: '0', ...env },
    log: (text) => lines.push(...text.split('\n')),
    resolver: fakeDns().resolver,
  });
  const output = lines.join('\n');
  const secrets = lines.filter((line) => KEY_LINE.test(line));
  return { ...started, lines, output, secrets };
}

/** Runs a printed curl line the way a shell would, with fetch. */
async function runCurl(line: string) {
  const url = line.match(/curl -s (\S+)/)?.[1] ?? '';
  const key = line.match(/x-api-key: ([^']+)'/)?.[1] ?? '';
  const data = line.match(/-d '([^']*)'/)?.[1];
  const headers: Record<string, string> = { 'x-api-key': key };
  if (data !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method: data === undefined ? 'GET' : 'POST', headers, body: data });
  return { status: res.status, json: await res.json() };
}

describe('server.js main()', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('--memory prints a fresh test and live key on every start, each on its own line, with curl lines that work', async () => {
    for (let run = 0; run < 2; run++) {
      const s = await start(['--memory']);
      try {
        expect(s.secrets.map((k) => k.slice(0, 8))).toEqual(['mk_test_', 'mk_live_']);
        expect(s.output).toContain(`${DEMO_CREDITS} credits`);
        const curls = s.lines.filter((line) => line.startsWith('curl '));
        expect(curls.length).toBeGreaterThanOrEqual(3);
        for (const line of curls) {
          const res = await runCurl(line);
          expect(res.status, line).toBe(200);
        }
        const account = await runCurl(curls.at(-1) as string);
        // The live verify (1) and the live contacts search (5) were charged.
        expect(account.json.account.balance).toBe(DEMO_CREDITS - 6);
        // Every request of the calling key is counted: each live curl line, plus this second account call.
        const live = account.json.key.id as string;
        expect(account.json.usage).toMatchObject({ keyId: live, denied: 0, lastUsedIp: '127.0.0.1' });
        expect(account.json.usage.allowed).toBe(
          curls.filter((line) => line.includes(s.secrets[1] as string)).length + 1,
        );
      } finally {
        await s.close();
      }
    }
  });

  it('on PGlite prints the keys on first start only; later starts keep the keys and the balance', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keygate-email-server-'));
    dirs.push(dir);
    const first = await start(['--data-dir', dir]);
    let secrets: string[];
    try {
      secrets = first.secrets;
      expect(secrets).toHaveLength(2);
      expect(first.output).toContain(`PGlite at ${dir}`);
      const live = first.lines.find(
        (line) => line.startsWith('curl ') && line.includes('mk_live_') && line.includes('/verify'),
      );
      expect((await runCurl(live as string)).status).toBe(200);
    } finally {
      await first.close();
    }

    const second = await start(['--data-dir', dir]);
    try {
      expect(second.secrets).toEqual([]);
      for (const secret of secrets) expect(second.output).not.toContain(secret);
      expect(second.output).toContain('already exist');
      expect(second.output).toContain('--new-keys');
      expect(second.output).toContain(`${DEMO_CREDITS - 1} credits`);
      for (const secret of secrets) {
        const res = await fetch(`${second.url}/v1/account`, { headers: { 'x-api-key': secret } });
        expect(res.status).toBe(200);
        expect((await res.json()).account.balance).toBe(DEMO_CREDITS - 1);
      }
    } finally {
      await second.close();
    }

    const third = await start(['--data-dir', dir, '--new-keys']);
    try {
      expect(third.secrets).toHaveLength(2);
      expect(third.secrets).not.toContain(secrets[0]);
    } finally {
      await third.close();
    }
  });

  it.each([[['--bogus']], [['--data-dir']]])('refuses unknown arguments %j', async (argv) => {
    await expect(main({ argv, env: { PORT: '0' }, log: () => {} })).rejects.toThrow();
  });

  it('refuses a PORT that is not a port', async () => {
    await expect(main({ argv: ['--memory'], env: { PORT: 'eighty' }, log: () => {} })).rejects.toThrow(/PORT/);
  });
});
