// `keygate webhooks`: endpoints added from the command line (the secret printed once), listed without
// secrets, removed; and the delivery log of the events the CLI's own key changes wrote.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebhookDelivery, WebhookEndpoint } from 'keygate';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'keygate-cli-webhooks-'));
const folder = join(dir, 'db');
const account = 'acct_hooks';

async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--store', `pglite:${folder}`], {
    env: {},
    out: (text) => (stdout += `${text}\n`),
    err: (text) => (stderr += `${text}\n`),
  });
  return { code, stdout, stderr };
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('keygate webhooks', () => {
  it('adds an endpoint and prints its secret once; list shows it without the secret; deliveries shows the key events', async () => {
    const added = await cli([
      'webhooks',
      'add',
      '--account',
      account,
      '--url',
      'https://hooks.example.com/k',
      '--event',
      'key.created',
      '--event',
      'key.revoked',
    ]);
    expect(added.code).toBe(0);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(added.stdout)?.[0] as string;
    expect(secret).toMatch(/^whsec_/);

    const listed = await cli(['webhooks', 'list', '--account', account, '--json']);
    const endpoints = JSON.parse(listed.stdout) as WebhookEndpoint[];
    expect(endpoints).toMatchObject([
      { url: 'https://hooks.example.com/k', eventTypes: ['key.created', 'key.revoked'], enabled: true },
    ]);
    expect(listed.stdout).not.toContain(secret.slice(6));
    expect((await cli(['webhooks', 'list', '--account', 'acct_other', '--json'])).stdout.trim()).toBe('[]');

    const created = JSON.parse(
      (await cli(['keys', 'create', '--account', account, '--name', 'ci', '--mode', 'test', '--json'])).stdout,
    );
    await cli(['keys', 'revoke', created.key.id, '--yes']);
    const log = JSON.parse(
      (await cli(['webhooks', 'deliveries', '--account', account, '--json'])).stdout,
    ) as WebhookDelivery[];
    expect(log.map((d) => [d.eventType, d.status])).toEqual([
      ['key.revoked', 'pending'],
      ['key.created', 'pending'],
    ]);
    const text = await cli(['webhooks', 'deliveries', '--account', account]);
    expect(text.stdout).toContain('key.revoked');

    const id = endpoints[0]?.id as string;
    expect((await cli(['webhooks', 'remove', id, '--account', 'acct_other'])).code).toBe(2);
    expect((await cli(['webhooks', 'remove', id, '--account', account])).code).toBe(0);
    expect((await cli(['webhooks', 'list', '--account', account])).stdout.trim()).toBe('no endpoints');
  }, 30_000);

  it('refuses a bad URL with exit 1, naming url, adding nothing', async () => {
    const bad = await cli(['webhooks', 'add', '--account', account, '--url', 'ftp://x', '--json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr).error).toMatchObject({ code: 'invalid_input', field: 'url' });
  }, 30_000);

  it('refuses a metadata or loopback URL, adding nothing; a developer adds a local one with --allow-private-network', async () => {
    const local = 'acct_local';
    const metadata = await cli(['webhooks', 'add', '--account', local, '--url', 'http://169.254.169.254/', '--json']);
    expect(metadata.code).toBe(1);
    expect(JSON.parse(metadata.stderr).error).toMatchObject({ code: 'invalid_input', field: 'url' });
    const url = 'http://127.0.0.1:4000/';
    expect((await cli(['webhooks', 'add', '--account', local, '--url', url])).code).toBe(1);
    expect((await cli(['webhooks', 'list', '--account', local])).stdout.trim()).toBe('no endpoints');
    const added = await cli(['webhooks', 'add', '--account', local, '--url', url, '--allow-private-network', '--json']);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout).endpoint).toMatchObject({ url, accountId: local });
  }, 60_000);
});
