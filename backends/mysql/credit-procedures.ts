/** A text parameter compared with the credit tables' columns: their character set and collation. */
const TEXT = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

/**
 * The version in the procedures' names. MySQL has no transactional DDL (and MySQL 8 no `CREATE OR
 * REPLACE PROCEDURE`), so a procedure is never replaced in place while other processes call it: a
 * change to one is a new name (`_v2`), created next to the old one, and the old one is left for
 * processes still running the older keygate.
 */
export const CREDIT_PROCEDURES_VERSION = 1;

/**
 * The credit ledger's stored procedures for the table prefix `p`, as `[name, CREATE PROCEDURE]`
 * pairs, created by `MysqlCreditLedger.migrate()` when missing. Each of `hold`, `settle` and `release`
 * is then one `CALL`, so one round trip: the procedure runs the call's transaction itself (`START
 * TRANSACTION` ... `COMMIT`, and `ROLLBACK` then the error again on any failure, so a deadlock victim
 * is run again whole by the caller), locking the account's balance row first (`SELECT ... FOR
 * UPDATE`) and lapsing the account's expired holds, exactly as the earlier multi-statement
 * transaction did. Times come from `UTC_TIMESTAMP(3)` read once the lock is granted. Each answers
 * one row:
 *
 * - `<p>credit_hold_v1(account, amount, hold id, key id, ttl in microseconds)`: `ok` (1 or 0) and
 *   `available`, the balance after; an unknown account is refused with 0.
 * - `<p>credit_settle_v1(hold id, amount or NULL for all)`: `state` (`settled`; `closed`, already
 *   settled, released or lapsed, nothing changed; `unknown`; `over`, more than the open hold, nothing
 *   settled), `charged`, `available`, `held`.
 * - `<p>credit_release_v1(hold id)`: `state` (`released`, `closed` or `unknown`) and `available`.
 * - `<p>credit_sweep_v1(account, now, INOUT available)`: the lapse the three share (no transaction of
 *   its own; its caller holds the account's lock).
 *
 * @example
 * for (const [, statement] of creditProcedures('keygate_')) await pool.query(statement);
 */
export function creditProcedures(p: string): readonly (readonly [name: string, statement: string])[] {
  const v = `_v${CREDIT_PROCEDURES_VERSION}`;
  const sweep = `${p}credit_sweep${v}`;
  const onError = 'DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;';
  // settle and release: the hold's account and amount, then the account's balance row, locked.
  const lockHold = `START TRANSACTION;
  SELECT account_id, amount INTO v_account, v_held FROM ${p}credit_holds WHERE id = p_hold_id;
  IF v_account IS NOT NULL THEN
    SELECT available INTO v_available FROM ${p}credit_balances WHERE account_id = v_account FOR UPDATE;
  END IF;`;
  return [
    [
      sweep,
      `CREATE PROCEDURE ${sweep}(IN p_account VARCHAR(255) ${TEXT}, IN p_now DATETIME(3), INOUT p_available BIGINT)
MODIFIES SQL DATA
BEGIN
  DECLARE v_returned BIGINT DEFAULT 0;
  SELECT COALESCE(SUM(amount), 0) INTO v_returned FROM ${p}credit_holds
    WHERE account_id = p_account AND state = 'open' AND expires_at <= p_now FOR UPDATE;
  IF v_returned > 0 THEN
    UPDATE ${p}credit_holds SET state = 'lapsed', closed_at = p_now
      WHERE account_id = p_account AND state = 'open' AND expires_at <= p_now;
    SET p_available = p_available + v_returned;
    UPDATE ${p}credit_balances SET available = p_available WHERE account_id = p_account;
  END IF;
END`,
    ],
    [
      `${p}credit_hold${v}`,
      `CREATE PROCEDURE ${p}credit_hold${v}(IN p_account VARCHAR(255) ${TEXT}, IN p_amount BIGINT,
  IN p_hold_id VARCHAR(255) ${TEXT}, IN p_key_id VARCHAR(512) ${TEXT}, IN p_ttl_us BIGINT)
MODIFIES SQL DATA
BEGIN
  DECLARE v_available BIGINT DEFAULT NULL;
  DECLARE v_now DATETIME(3);
  ${onError}
  START TRANSACTION;
  SELECT available INTO v_available FROM ${p}credit_balances WHERE account_id = p_account FOR UPDATE;
  IF v_available IS NULL THEN
    COMMIT;
    SELECT 0 AS ok, 0 AS available;
  ELSE
    SET v_now = UTC_TIMESTAMP(3);
    CALL ${sweep}(p_account, v_now, v_available);
    IF v_available < p_amount THEN
      COMMIT;
      SELECT 0 AS ok, v_available AS available;
    ELSE
      SET v_available = v_available - p_amount;
      UPDATE ${p}credit_balances SET available = v_available WHERE account_id = p_account;
      INSERT INTO ${p}credit_holds (id, account_id, amount, key_id, state, created_at, expires_at)
        VALUES (p_hold_id, p_account, p_amount, p_key_id, 'open', v_now, v_now + INTERVAL p_ttl_us MICROSECOND);
      COMMIT;
      SELECT 1 AS ok, v_available AS available;
    END IF;
  END IF;
END`,
    ],
    [
      `${p}credit_settle${v}`,
      `CREATE PROCEDURE ${p}credit_settle${v}(IN p_hold_id VARCHAR(255) ${TEXT}, IN p_amount BIGINT)
MODIFIES SQL DATA
BEGIN
  DECLARE v_account VARCHAR(255) ${TEXT} DEFAULT NULL;
  DECLARE v_held BIGINT DEFAULT 0;
  DECLARE v_charged BIGINT;
  DECLARE v_available BIGINT DEFAULT NULL;
  DECLARE v_open INT DEFAULT 0;
  DECLARE v_key_id VARCHAR(512) ${TEXT} DEFAULT NULL;
  DECLARE v_now DATETIME(3);
  ${onError}
  ${lockHold}
  IF v_account IS NULL THEN
    COMMIT;
    SELECT 'unknown' AS state, 0 AS charged, 0 AS available, 0 AS held;
  ELSEIF v_available IS NULL THEN
    COMMIT;
    SELECT 'closed' AS state, 0 AS charged, 0 AS available, v_held AS held;
  ELSE
    SET v_now = UTC_TIMESTAMP(3);
    CALL ${sweep}(v_account, v_now, v_available);
    SELECT 1, key_id INTO v_open, v_key_id FROM ${p}credit_holds
      WHERE id = p_hold_id AND state = 'open' AND expires_at > v_now FOR UPDATE;
    SET v_charged = COALESCE(p_amount, v_held);
    IF v_open = 0 THEN
      COMMIT;
      SELECT 'closed' AS state, 0 AS charged, v_available AS available, v_held AS held;
    ELSEIF v_charged > v_held THEN
      COMMIT;
      SELECT 'over' AS state, 0 AS charged, v_available AS available, v_held AS held;
    ELSE
      UPDATE ${p}credit_holds SET state = 'settled', charged = v_charged, closed_at = v_now WHERE id = p_hold_id;
      SET v_available = v_available + v_held - v_charged;
      UPDATE ${p}credit_balances SET available = v_available WHERE account_id = v_account;
      IF v_charged > 0 THEN
        INSERT INTO ${p}credit_entries (account_id, kind, amount, balance, key_id, hold_id, created_at)
          VALUES (v_account, 'charge', -v_charged, v_available, v_key_id, p_hold_id, v_now);
      END IF;
      COMMIT;
      SELECT 'settled' AS state, v_charged AS charged, v_available AS available, v_held AS held;
    END IF;
  END IF;
END`,
    ],
    [
      `${p}credit_release${v}`,
      `CREATE PROCEDURE ${p}credit_release${v}(IN p_hold_id VARCHAR(255) ${TEXT})
MODIFIES SQL DATA
BEGIN
  DECLARE v_account VARCHAR(255) ${TEXT} DEFAULT NULL;
  DECLARE v_held BIGINT DEFAULT 0;
  DECLARE v_available BIGINT DEFAULT NULL;
  DECLARE v_open INT DEFAULT 0;
  DECLARE v_now DATETIME(3);
  ${onError}
  ${lockHold}
  IF v_account IS NULL THEN
    COMMIT;
    SELECT 'unknown' AS state, 0 AS available;
  ELSEIF v_available IS NULL THEN
    COMMIT;
    SELECT 'closed' AS state, 0 AS available;
  ELSE
    SET v_now = UTC_TIMESTAMP(3);
    CALL ${sweep}(v_account, v_now, v_available);
    SELECT 1 INTO v_open FROM ${p}credit_holds
      WHERE id = p_hold_id AND state = 'open' AND expires_at > v_now FOR UPDATE;
    IF v_open = 0 THEN
      COMMIT;
      SELECT 'closed' AS state, v_available AS available;
    ELSE
      UPDATE ${p}credit_holds SET state = 'released', closed_at = v_now WHERE id = p_hold_id;
      SET v_available = v_available + v_held;
      UPDATE ${p}credit_balances SET available = v_available WHERE account_id = v_account;
      COMMIT;
      SELECT 'released' AS state, v_available AS available;
    END IF;
  END IF;
END`,
    ],
  ];
}
