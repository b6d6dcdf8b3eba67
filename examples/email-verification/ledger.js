// Prepaid credits. A debit is one atomic step that either takes the whole cost or nothing: a
// conditional UPDATE (balance >= cost) in SQL, a synchronous check-and-subtract in memory. There is no
// read-then-write window, so concurrent requests can neither overdraw nor lose a debit.

/**
 * @typedef {{ accountId: string, keyId: string, operation: string, items: number, credits: number }} ChargeInput
 * @typedef {{ ok: true, chargeId: string, balance: number } | { ok: false, balance: number }} DebitResult
 * @typedef {{ id: string, keyId: string, operation: string, items: number, credits: number, refunded: boolean, createdAt: string }} Charge
 * @typedef {{ requests: number, credits: number }} BilledTotals billed requests (one per charge) and the credits they cost
 * @typedef {object} Ledger
 * @property {() => Promise<void>} migrate creates the ledger's tables if missing; idempotent
 * @property {(accountId: string, credits: number) => Promise<boolean>} open creates the account with a starting balance; false if it existed (nothing changes)
 * @property {(accountId: string) => Promise<number>} balance 0 for an unknown account
 * @property {(input: ChargeInput) => Promise<DebitResult>} debit takes `credits` if the balance covers them, else nothing
 * @property {(chargeId: string) => Promise<void>} refund gives a charge's credits back, once (for work that then failed)
 * @property {(accountId: string, limit?: number) => Promise<Charge[]>} charges newest first
 * @property {(accountId: string, since: Date) => Promise<BilledTotals>} billedSince the charges made at or after `since`, refunded ones left out
 */

/**
 * The ledger of `--memory` runs and tests: lost when the process ends.
 *
 * @implements {Ledger}
 * @example
 * const ledger = new MemoryLedger();
 * await ledger.open('acct_1', 100);
 * await ledger.debit({ accountId: 'acct_1', keyId: 'key_1', operation: 'verify', items: 1, credits: 1 }); // { ok: true, balance: 99, ... }
 */
export class MemoryLedger {
  /** @type {Map<string, number>} */
  #balances = new Map();
  /** @type {Map<string, Charge & { accountId: string }>} */
  #charges = new Map();
  #next = 1;

  async migrate() {}

  /** @param {string} accountId @param {number} credits */
  async open(accountId, credits) {
    if (this.#balances.has(accountId)) return false;
    this.#balances.set(accountId, credits);
    return true;
  }

  /** @param {string} accountId */
  async balance(accountId) {
    return this.#balances.get(accountId) ?? 0;
  }

  /** @param {ChargeInput} input @returns {Promise<DebitResult>} */
  async debit({ accountId, keyId, operation, items, credits }) {
    // No await between the check and the subtraction: this is the whole critical section.
    const balance = this.#balances.get(accountId) ?? 0;
    if (balance < credits) return { ok: false, balance };
    this.#balances.set(accountId, balance - credits);
    const id = String(this.#next++);
    const createdAt = new Date().toISOString();
    this.#charges.set(id, { id, accountId, keyId, operation, items, credits, refunded: false, createdAt });
    return { ok: true, chargeId: id, balance: balance - credits };
  }

  /** @param {string} chargeId */
  async refund(chargeId) {
    const charge = this.#charges.get(chargeId);
    if (!charge || charge.refunded) return;
    charge.refunded = true;
    this.#balances.set(charge.accountId, (this.#balances.get(charge.accountId) ?? 0) + charge.credits);
  }

  /** @param {string} accountId @param {number} [limit] */
  async charges(accountId, limit = 20) {
    return [...this.#charges.values()]
      .filter((c) => c.accountId === accountId)
      .reverse()
      .slice(0, limit)
      .map(({ accountId: _, ...charge }) => ({ ...charge }));
  }

  /** @param {string} accountId @param {Date} since @returns {Promise<BilledTotals>} */
  async billedSince(accountId, since) {
    const from = since.toISOString();
    let requests = 0;
    let credits = 0;
    for (const charge of this.#charges.values()) {
      if (charge.accountId !== accountId || charge.refunded || charge.createdAt < from) continue;
      requests++;
      credits += charge.credits;
    }
    return { requests, credits };
  }
}

/**
 * The ledger in PostgreSQL or PGlite, in its own tables beside keygate's (same database, same client).
 *
 * @implements {Ledger}
 * @example
 * const ledger = new SqlLedger({ client: new PGlite('./.keygate') }); // or a pg.Pool
 * await ledger.migrate();
 */
export class SqlLedger {
  /** @type {{ query(text: string, params?: unknown[]): Promise<{ rows: any[] }> }} */
  #db;

  /** @param {{ client: { query(text: string, params?: unknown[]): Promise<{ rows: any[] }> } }} options a `pg.Pool` or a PGlite instance */
  constructor({ client }) {
    if (!client || typeof client.query !== 'function')
      throw new TypeError('SqlLedger: client must be a pg.Pool or PGlite');
    this.#db = client;
  }

  async migrate() {
    // One statement, so it runs as one transaction; the advisory lock serialises concurrent starts.
    await this.#db.query(`DO $$ BEGIN
      PERFORM pg_advisory_xact_lock(hashtext('email-verification ledger'));
      CREATE TABLE IF NOT EXISTS ledger_accounts (
        id text PRIMARY KEY,
        balance bigint NOT NULL CHECK (balance >= 0),
        created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE IF NOT EXISTS ledger_charges (
        id bigserial PRIMARY KEY,
        account_id text NOT NULL REFERENCES ledger_accounts (id),
        key_id text NOT NULL,
        operation text NOT NULL,
        items integer NOT NULL,
        credits bigint NOT NULL,
        refunded boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now());
      CREATE INDEX IF NOT EXISTS ledger_charges_account ON ledger_charges (account_id, id);
    END $$`);
  }

  /** @param {string} accountId @param {number} credits */
  async open(accountId, credits) {
    const { rows } = await this.#db.query(
      'INSERT INTO ledger_accounts (id, balance) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id',
      [accountId, credits],
    );
    return rows.length === 1;
  }

  /** @param {string} accountId */
  async balance(accountId) {
    const { rows } = await this.#db.query('SELECT balance::text AS balance FROM ledger_accounts WHERE id = $1', [
      accountId,
    ]);
    return Number(rows[0]?.balance ?? 0);
  }

  /** @param {ChargeInput} input @returns {Promise<DebitResult>} */
  async debit({ accountId, keyId, operation, items, credits }) {
    // The WHERE clause is the check; the row lock makes a concurrent debit wait and re-check it.
    const { rows } = await this.#db.query(
      `WITH debited AS (
         UPDATE ledger_accounts SET balance = balance - $2 WHERE id = $1 AND balance >= $2 RETURNING id, balance
       ), charge AS (
         INSERT INTO ledger_charges (account_id, key_id, operation, items, credits)
         SELECT id, $3, $4, $5, $2 FROM debited RETURNING id
       )
       SELECT charge.id::text AS charge_id, debited.balance::text AS balance FROM debited, charge`,
      [accountId, credits, keyId, operation, items],
    );
    const row = rows[0];
    if (row) return { ok: true, chargeId: row.charge_id, balance: Number(row.balance) };
    return { ok: false, balance: await this.balance(accountId) };
  }

  /** @param {string} chargeId */
  async refund(chargeId) {
    await this.#db.query(
      `WITH refunded AS (
         UPDATE ledger_charges SET refunded = true WHERE id = $1::bigint AND NOT refunded RETURNING account_id, credits
       )
       UPDATE ledger_accounts a SET balance = a.balance + r.credits FROM refunded r WHERE a.id = r.account_id`,
      [chargeId],
    );
  }

  /** @param {string} accountId @param {number} [limit] */
  async charges(accountId, limit = 20) {
    const { rows } = await this.#db.query(
      `SELECT id::text, key_id, operation, items, credits::text, refunded, created_at FROM ledger_charges
       WHERE account_id = $1 ORDER BY id DESC LIMIT $2`,
      [accountId, limit],
    );
    return rows.map((r) => ({
      id: r.id,
      keyId: r.key_id,
      operation: r.operation,
      items: Number(r.items),
      credits: Number(r.credits),
      refunded: r.refunded,
      createdAt: new Date(r.created_at).toISOString(),
    }));
  }

  /** @param {string} accountId @param {Date} since @returns {Promise<BilledTotals>} */
  async billedSince(accountId, since) {
    const { rows } = await this.#db.query(
      `SELECT count(*)::text AS requests, coalesce(sum(credits), 0)::text AS credits FROM ledger_charges
       WHERE account_id = $1 AND NOT refunded AND created_at >= $2`,
      [accountId, since.toISOString()],
    );
    return { requests: Number(rows[0]?.requests ?? 0), credits: Number(rows[0]?.credits ?? 0) };
  }
}
