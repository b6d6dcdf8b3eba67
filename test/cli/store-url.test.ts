// Store URLs carry passwords: whatever the CLI prints about a store shows its password masked, or
// nothing of a URL that does not parse but its scheme.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { describeStoreUrl, maskUserinfo } from '../../cli/store-url.js';

async function keygate(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env,
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
  });
  return { code, output: stdout + stderr, stderr };
}

// Each with a password found nowhere else in the CLI's messages. Port 1 on loopback refuses at once;
// the hosts that do not resolve fail at the lookup.
const FAILING = [
  ['mysql', 'mysql://user:s3cret-mysql@127.0.0.1:1/db'],
  ['postgress', 'postgress://u:s3cret-typo@h/db'],
  ['mariadb', 'mariadb://u:s3cret-maria@127.0.0.1:1/db'],
  ['redis', 'redis://:s3cret-redis@127.0.0.1:1'],
  ['postgres', 'postgres://u:s3cret-pg@127.0.0.1:1'],
  ['mongodb', 'mongodb://admin:s3cret-mongo@db.internal/keys'],
  ['postgres', 'postgres://u:s3cret-query@127.0.0.1:1/db?password=s3cret-param'],
] as const;

describe('a store URL in a failing command', () => {
  it.each(FAILING)(
    'a %s store that fails names the scheme and never prints the password or the raw URL',
    async (scheme, url) => {
      for (const via of ['flag', 'env', 'json'] as const) {
        const argv = ['keys', 'list', '--account', 'acct_1', ...(via === 'flag' ? ['--store', url] : [])];
        const run = await keygate(via === 'json' ? [...argv, '--store', url, '--json'] : argv, {
          ...(via === 'env' && { KEYGATE_STORE: url }),
        });
        expect(run.code).not.toBe(0);
        expect(run.output).toContain(`${scheme}:`);
        expect(run.output).not.toContain(url);
        expect(run.output).not.toMatch(/s3cret/);
      }
    },
    30_000,
  );

  it('a URL that does not parse is not echoed, only its scheme', async () => {
    const run = await keygate(['keys', 'list', '--account', 'a', '--store', 'postgres://u:s3cret-bad@[db/keys']);
    expect(run.code).toBe(1);
    expect(run.output).toContain('postgres:');
    expect(run.output).not.toMatch(/s3cret|\[db/);
  });

  it('a misspelt scheme is refused naming the nearest one the CLI opens', async () => {
    const run = await keygate(['keys', 'list', '--account', 'a', '--store', 'postgress://u:s3cret@h/db', '--json']);
    expect(run.code).toBe(1);
    const { error } = JSON.parse(run.stderr);
    expect(error).toMatchObject({ code: 'invalid_input', field: 'store' });
    expect(error.message).toContain('Did you mean postgres://');
    expect(error.message).toContain('postgress://u:***@h/db');
  });
});

describe('describeStoreUrl', () => {
  it.each([
    ['mysql://user:secret@host/db', 'mysql://user:***@host/db'],
    ['mariadb://a:b@c:3306/d?prefix=x_&password=zz', 'mariadb://a:***@c:3306/d?prefix=x_&password=***'],
    ['redis://:pw@h', 'redis://:***@h'],
    ['postgres://u:p%40ss@h/db', 'postgres://u:***@h/db'],
    ['postgres://app@db/keys?schema=kg', 'postgres://app@db/keys?schema=kg'],
    ['pglite:./.keygate', 'pglite:./.keygate'],
    ['sqlite:///var/lib/keys.db', 'sqlite:///var/lib/keys.db'],
    ['postgres://u:p@[bad', 'a postgres: URL that does not parse'],
    ['mysql:/u:pw@db', 'a mysql: URL that does not parse'],
  ])('%s shows as %s', (url, shown) => {
    expect(describeStoreUrl(url)).toBe(shown);
  });

  it('masks every password in a message quoting URLs, an @ inside the password too', () => {
    expect(maskUserinfo('to mysql://u:p@ss@h/db and redis://:pw@h failed')).toBe(
      'to mysql://u:***@h/db and redis://:***@h failed',
    );
  });
});
