// Every keygate/testing contract on the stores drizzlePgStores builds over a drizzle-orm/pglite db,
// in tables made the Drizzle way (drizzle-kit's generator and keygate's custom migration).
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeDrizzleContracts } from './support/contracts.js';

// PGlite takes about a second to start: one in-memory database for the file, a schema per fixture.
let pglite: Promise<PGlite> | undefined;
let schemas = 0;
afterAll(async () => {
  if (pglite) await (await pglite).close();
});

describeDrizzleContracts(
  'drizzle-orm/pglite',
  async () => {
    pglite ??= PGlite.create();
    const client = await pglite;
    return { db: drizzle(client), peerDb: drizzle(client), schema: `drizzle_${++schemas}` };
  },
  { describe, it, expect, beforeEach, afterEach },
);
