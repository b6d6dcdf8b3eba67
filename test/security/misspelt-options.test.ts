// The attack catalogue's misspelt options (test/fixtures/attacks.ts): each entry point is built for
// real with valid options plus one typo, and must refuse it with invalid_input naming the member and
// the option meant, before anything is written or served. Built without the typo, each one works.
import Fastify from 'fastify';
import {
  authenticate,
  CachedKeyStore,
  InvalidInputError,
  KeyManager,
  MemoryCreditLedger,
  MemoryKeyStore,
} from 'keygate';
import { apiKeyAuth as expressAuth } from 'keygate/express';
import { apiKeyAuth as fastifyAuth } from 'keygate/fastify';
import { apiKeyAuth as honoAuth } from 'keygate/hono';
import { apiKeyAuth as koaAuth } from 'keygate/koa';
import { githubSecretScanning } from 'keygate/leaks';
import { createWebhookDispatcher, MemoryOutbox } from 'keygate/webhooks';
import { describe, expect, it } from 'vitest';
import { MISSPELT_OPTIONS, type MisspeltOption } from '../fixtures/attacks.js';

const store = new MemoryKeyStore();
const keys = new KeyManager({ store });
const { secret } = await keys.create({ accountId: 'acct_typo', name: 'open', mode: 'live' });
const request = { headers: { 'x-api-key': secret }, ip: '203.0.113.7' };

type Typo = Readonly<Record<string, unknown>>;
/** Builds (and, where building is not enough, uses) each entry point with these extra members. */
const BUILD: Record<MisspeltOption['entry'], (typo: Typo) => unknown> = {
  authenticate: (typo) => authenticate(request, store, { ...typo }),
  'apiKeyAuth (Express)': (typo) => expressAuth({ store, ...typo }),
  'apiKeyAuth (Fastify)': async (typo) => {
    const app = Fastify();
    try {
      await app.register(fastifyAuth, { store, ...typo } as never).ready();
    } finally {
      await app.close();
    }
  },
  'apiKeyAuth (Hono)': (typo) => honoAuth({ store, ...typo }),
  'apiKeyAuth (Koa)': (typo) => koaAuth({ store, ...typo }),
  CachedKeyStore: (typo) => new CachedKeyStore(store, { ...typo }),
  'KeyManager.create': (typo) => keys.create({ accountId: 'acct_typo', name: 'typo', mode: 'live', ...typo }),
  'MemoryCreditLedger.hold': async (typo) => {
    const ledger = new MemoryCreditLedger();
    await ledger.topUp('acct_typo', 10, { reference: 'seed' });
    return ledger.hold('acct_typo', 1, { ...typo });
  },
  createWebhookDispatcher: (typo) => createWebhookDispatcher({ outbox: new MemoryOutbox(), ...typo }),
  githubSecretScanning: (typo) => githubSecretScanning({ manager: keys, ...typo }),
};

async function outcome(run: () => unknown): Promise<unknown> {
  try {
    return await run();
  } catch (err) {
    return err;
  }
}

describe('the catalogue names every class of misspelt option the review found', () => {
  it('covers authenticate, four adapters, the cache, key input, the ledger, webhooks and leaks', () => {
    expect(new Set(MISSPELT_OPTIONS.map((row) => row.entry)).size).toBe(Object.keys(BUILD).length);
  });
});

describe('a misspelt option is refused, never ignored', () => {
  it.each(MISSPELT_OPTIONS)('$entry: $field ($name) is refused, naming $near', async (row) => {
    const before = (await keys.list('acct_typo')).length;
    const thrown = await outcome(() => BUILD[row.entry](row.typo));
    expect(thrown).toBeInstanceOf(InvalidInputError);
    expect(thrown).toMatchObject({
      code: 'invalid_input',
      field: row.field,
      issues: [expect.objectContaining({ field: row.field, reason: 'unknown_option' })],
    });
    expect((thrown as Error).message).toContain(`did you mean \`${row.near}\`?`);
    expect((await keys.list('acct_typo')).length).toBe(before);
  });

  it.each([...new Set(MISSPELT_OPTIONS.map((row) => row.entry))])('%s works without the typo', async (entry) => {
    expect(await outcome(() => BUILD[entry]({}))).not.toBeInstanceOf(Error);
  });
});
