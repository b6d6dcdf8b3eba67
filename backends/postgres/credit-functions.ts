// settle and release, once the hold's account is known: its balance row locked (none: the hold is
// closed), then its expired holds lapsed, by the time read once the lock is granted.
const LOCK_AND_SWEEP = `  SELECT b.available INTO r_available FROM S.keygate_credit_balances b WHERE b.account_id = v_account FOR UPDATE;
  IF NOT FOUND THEN
    r_state := 'closed';
    r_available := 0;
    RETURN;
  END IF;
  v_now := clock_timestamp();
  r_available := r_available + S.keygate_credit_sweep(v_account, v_now);`;

/**
 * The credit ledger's PL/pgSQL functions, created (or replaced) by `PostgresCreditLedger.migrate()`
 * after its tables; `S` stands for the quoted schema, as in `CREDIT_TABLES`. Each runs a whole `hold`,
 * `settle` or `release` in one statement, so one round trip, atomically (the statement's transaction):
 * it locks the account's balance row (`SELECT ... FOR UPDATE`), lapses the account's expired holds,
 * then does the call's work, exactly as the earlier multi-statement transaction did. Each statement
 * inside sees the rows committed before it (READ COMMITTED), and times come from `clock_timestamp()`
 * read once the lock is granted, so every process agrees on when a hold lapses. `CREATE OR REPLACE`
 * keeps `migrate()` idempotent and upgrades a schema made before the functions existed.
 *
 * - `keygate_credit_hold(account, amount, hold id, key id, ttl ms)` -> `(r_ok, r_available)`: the
 *   hold taken (`r_ok`) or refused, and the balance after; an unknown account is refused with 0.
 * - `keygate_credit_settle(hold id, amount or null)` -> `(r_state, r_charged, r_available, r_held)`:
 *   `r_state` `settled`, `closed` (already settled, released or lapsed: nothing changed), `unknown`
 *   (no such hold), or `over` (more than the open hold: nothing settled, the caller throws).
 * - `keygate_credit_release(hold id)` -> `(r_state, r_available)`: `released`, `closed` or `unknown`.
 *
 * @example
 * for (const statement of CREDIT_FUNCTIONS) await q(statement.replaceAll('S.', '"billing".'));
 */
export const CREDIT_FUNCTIONS: readonly string[] = [
  `CREATE OR REPLACE FUNCTION S.keygate_credit_sweep(p_account text, p_now timestamptz)
  RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_returned bigint;
BEGIN
  WITH lapsed AS (
    UPDATE S.keygate_credit_holds h SET state = 'lapsed', closed_at = p_now
    WHERE h.account_id = p_account AND h.state = 'open' AND h.expires_at <= p_now
    RETURNING h.amount
  )
  SELECT coalesce(sum(l.amount), 0) INTO v_returned FROM lapsed l;
  IF v_returned > 0 THEN
    UPDATE S.keygate_credit_balances b SET available = b.available + v_returned WHERE b.account_id = p_account;
  END IF;
  RETURN v_returned;
END
$$`,
  `CREATE OR REPLACE FUNCTION S.keygate_credit_hold(
    p_account text, p_amount bigint, p_hold_id text, p_key_id text, p_ttl_ms bigint,
    OUT r_ok boolean, OUT r_available bigint)
  LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz;
BEGIN
  SELECT b.available INTO r_available FROM S.keygate_credit_balances b WHERE b.account_id = p_account FOR UPDATE;
  IF NOT FOUND THEN
    r_ok := false;
    r_available := 0;
    RETURN;
  END IF;
  v_now := clock_timestamp();
  r_available := r_available + S.keygate_credit_sweep(p_account, v_now);
  IF r_available < p_amount THEN
    r_ok := false;
    RETURN;
  END IF;
  UPDATE S.keygate_credit_balances b SET available = b.available - p_amount WHERE b.account_id = p_account;
  INSERT INTO S.keygate_credit_holds (id, account_id, amount, key_id, state, created_at, expires_at)
  VALUES (p_hold_id, p_account, p_amount, p_key_id, 'open', v_now, v_now + p_ttl_ms * interval '1 millisecond');
  r_ok := true;
  r_available := r_available - p_amount;
END
$$`,
  `CREATE OR REPLACE FUNCTION S.keygate_credit_settle(
    p_hold_id text, p_amount bigint,
    OUT r_state text, OUT r_charged bigint, OUT r_available bigint, OUT r_held bigint)
  LANGUAGE plpgsql AS $$
DECLARE
  v_account text;
  v_key_id text;
  v_now timestamptz;
BEGIN
  r_charged := 0;
  r_available := 0;
  SELECT h.account_id, h.amount INTO v_account, r_held FROM S.keygate_credit_holds h WHERE h.id = p_hold_id;
  IF NOT FOUND THEN
    r_state := 'unknown';
    r_held := 0;
    RETURN;
  END IF;
${LOCK_AND_SWEEP}
  IF coalesce(p_amount, r_held) > r_held THEN
    -- More than the hold is refused while it is open; a closed hold's settle changes nothing.
    PERFORM 1 FROM S.keygate_credit_holds h WHERE h.id = p_hold_id AND h.state = 'open' AND h.expires_at > v_now;
    r_state := CASE WHEN FOUND THEN 'over' ELSE 'closed' END;
    RETURN;
  END IF;
  UPDATE S.keygate_credit_holds h SET state = 'settled', charged = coalesce(p_amount, r_held), closed_at = v_now
  WHERE h.id = p_hold_id AND h.state = 'open' AND h.expires_at > v_now
  RETURNING h.key_id INTO v_key_id;
  IF NOT FOUND THEN
    r_state := 'closed';
    RETURN;
  END IF;
  r_state := 'settled';
  r_charged := coalesce(p_amount, r_held);
  r_available := r_available + r_held - r_charged;
  UPDATE S.keygate_credit_balances b SET available = r_available WHERE b.account_id = v_account;
  IF r_charged > 0 THEN
    INSERT INTO S.keygate_credit_entries (account_id, kind, amount, balance, key_id, hold_id, created_at)
    VALUES (v_account, 'charge', -r_charged, r_available, v_key_id, p_hold_id, v_now);
  END IF;
END
$$`,
  `CREATE OR REPLACE FUNCTION S.keygate_credit_release(p_hold_id text, OUT r_state text, OUT r_available bigint)
  LANGUAGE plpgsql AS $$
DECLARE
  v_account text;
  v_amount bigint;
  v_now timestamptz;
BEGIN
  r_available := 0;
  SELECT h.account_id, h.amount INTO v_account, v_amount FROM S.keygate_credit_holds h WHERE h.id = p_hold_id;
  IF NOT FOUND THEN
    r_state := 'unknown';
    RETURN;
  END IF;
${LOCK_AND_SWEEP}
  UPDATE S.keygate_credit_holds h SET state = 'released', closed_at = v_now
  WHERE h.id = p_hold_id AND h.state = 'open' AND h.expires_at > v_now;
  IF NOT FOUND THEN
    r_state := 'closed';
    RETURN;
  END IF;
  r_state := 'released';
  r_available := r_available + v_amount;
  UPDATE S.keygate_credit_balances b SET available = r_available WHERE b.account_id = v_account;
END
$$`,
];
