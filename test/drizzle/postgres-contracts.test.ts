// Every keygate/testing contract on the stores drizzlePgStores builds over drizzle-orm/node-postgres
// dbs (two pools, as two processes), in tables made the Drizzle way, a fresh schema per fixture.
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PG_URL, RUN_ID, serviceAvailable } from '../stores/support/services.js';
import { describeDrizzleContracts } from './support/contracts.js';

const available = await serviceAvailable('PostgreSQL', PG_URL, 'KEYGATE_PG_URL');
const schemas: string[] = [];
let pools: [pg.Pool, pg.Pool] | undefined;

function pool(): pg.Pool {
  const p = new pg.Pool({ connectionString: PG_URL, max: 10 });
  p.on('error', () => {});
  return p;
}

afterAll(async () => {
  if (!pools) return;
  for (const schema of schemas) await pools[0].query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await Promise.all(pools.map((p) => p.end()));
});

describe.skipIf(!available)('over PostgreSQL', () => {
  describeDrizzleContracts(
    'drizzle-orm/node-postgres',
    async () => {
      pools ??= [pool(), pool()];
      const schema = `keygate_dc${RUN_ID}_${schemas.length + 1}`;
      schemas.push(schema);
      return { db: drizzle(pools[0]), peerDb: drizzle(pools[1]), schema };
    },
    { describe, it, expect, beforeEach, afterEach },
  );
});
