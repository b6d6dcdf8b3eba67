import { PGlite } from '@electric-sql/pglite';
import { capabilityOf } from 'keygate';
import { PostgresKeyStore } from 'keygate/postgres';
import type { Outbox } from 'keygate/store-kit';
import { describeOutboxContract } from 'keygate/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PG_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';

const available = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const outboxOf = (store: PostgresKeyStore) => capabilityOf(store, 'outbox') as Outbox;
let schemas = 0;

// PGlite takes about a second to start: one in-memory database for the file, a schema per test.
let pglite: Promise<PGlite> | undefined;
const embedded = () => {
  pglite ??= PGlite.create();
  return pglite;
};
afterAll(async () => {
  if (pglite) await (await pglite).close();
});

describeOutboxContract(
  'PostgresKeyStore over PGlite',
  async () => {
    const db = await embedded();
    const schema = `outbox_${++schemas}`;
    const store = new PostgresKeyStore({ client: db, schema });
    await store.migrate();
    return {
      outbox: outboxOf(store),
      peer: outboxOf(new PostgresKeyStore({ client: db, schema })),
      close: async () => {
        await db.query(`DROP SCHEMA "${schema}" CASCADE`);
      },
    };
  },
  { describe, it, expect, beforeEach, afterEach },
);

describe.runIf(available)('over PostgreSQL', () => {
  describeOutboxContract(
    'PostgresKeyStore over pg, two pools',
    async () => {
      const schema = `keygate_ob${RUN_ID}_${++schemas}`;
      const [a, b] = [
        new pg.Pool({ connectionString: PG_URL, max: 5 }),
        new pg.Pool({ connectionString: PG_URL, max: 5 }),
      ];
      for (const p of [a, b]) p.on('error', () => {});
      const store = new PostgresKeyStore({ client: a, schema });
      await store.migrate();
      return {
        outbox: outboxOf(store),
        peer: outboxOf(new PostgresKeyStore({ client: b, schema })),
        close: async () => {
          await a.query(`DROP SCHEMA "${schema}" CASCADE`);
          await Promise.all([a.end(), b.end()]);
        },
      };
    },
    { describe, it, expect, beforeEach, afterEach },
  );
});
