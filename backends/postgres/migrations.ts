/**
 * Migration 4: the record of single-use tokens (the dashboard's redeemed sign-in links and ended
 * sessions), kept where the keys live so that a link works once across every process.
 */
const USED_TOKENS_MIGRATION: readonly string[] = [
  'CREATE TABLE T.keygate_used_tokens (token_id text PRIMARY KEY, expires_at timestamptz NOT NULL)',
  'CREATE INDEX keygate_used_tokens_expiry ON T.keygate_used_tokens (expires_at)',
];

/**
 * The schema, one entry per version, each a list of statements (PGlite runs one statement per call).
 * Never edit a released entry: add the next version. `T` stands for the schema-qualified table prefix.
 */
export const MIGRATIONS: readonly (readonly string[])[] = [
  [
    `CREATE TABLE T.keygate_keys (
      id text PRIMARY KEY,
      hash text NOT NULL,
      account_id text NOT NULL,
      name text NOT NULL,
      mode text NOT NULL CHECK (mode IN ('live', 'test')),
      status text NOT NULL CHECK (status IN ('active', 'revoked')),
      permissions jsonb NOT NULL,
      allowed_ips jsonb NOT NULL,
      hint text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      expires_at timestamptz,
      revoked_at timestamptz,
      rotated_from text,
      rotated_to text,
      metadata jsonb NOT NULL,
      version integer NOT NULL CHECK (version >= 1)
    )`,
    'CREATE UNIQUE INDEX keygate_keys_hash ON T.keygate_keys (hash)',
    'CREATE INDEX keygate_keys_account ON T.keygate_keys (account_id, created_at)',
    // Revocation is permanent even for a hand-written UPDATE: the database refuses to change a revoked row.
    `CREATE FUNCTION T.keygate_keys_revoked_is_final() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.status = 'revoked' THEN
        RAISE EXCEPTION 'keygate: key % is revoked and can no longer be changed', OLD.id USING ERRCODE = 'check_violation';
      END IF;
      RETURN NEW;
    END $$`,
    `CREATE TRIGGER keygate_keys_revoked_is_final BEFORE UPDATE ON T.keygate_keys
      FOR EACH ROW EXECUTE FUNCTION T.keygate_keys_revoked_is_final()`,
  ],
  // 2: usage statistics. Counts are added by upsert, so several processes flushing add up exactly.
  [
    `CREATE TABLE T.keygate_usage (
      key_id text NOT NULL,
      account_id text NOT NULL,
      day date NOT NULL,
      outcome text NOT NULL,
      count bigint NOT NULL CHECK (count >= 0),
      PRIMARY KEY (key_id, day, outcome)
    )`,
    `CREATE TABLE T.keygate_key_activity (
      key_id text PRIMARY KEY,
      last_used_at timestamptz NOT NULL,
      last_used_ip text
    )`,
  ],
  // 3: a key's own rate limit, { limit, windowMs } as jsonb; NULL = none of its own.
  ['ALTER TABLE T.keygate_keys ADD COLUMN rate_limit jsonb'],
  // 4: single-use tokens of the dashboard (sign-in links, ended sessions).
  USED_TOKENS_MIGRATION,
  // 5: the audit log of key management, append-only: the database refuses UPDATE, DELETE and TRUNCATE.
  // Ids sort by time as bytes (see auditId), hence COLLATE "C" on them and in both paging indexes.
  [
    `CREATE TABLE T.keygate_audit (
      id text COLLATE "C" PRIMARY KEY,
      at timestamptz NOT NULL,
      account_id text NOT NULL,
      key_id text,
      action text NOT NULL,
      actor_type text NOT NULL CHECK (actor_type IN ('dashboard', 'cli', 'api')),
      actor_id text,
      changes jsonb,
      address text
    )`,
    'CREATE INDEX keygate_audit_account ON T.keygate_audit (account_id, id)',
    'CREATE INDEX keygate_audit_key ON T.keygate_audit (key_id, id) WHERE key_id IS NOT NULL',
    `CREATE FUNCTION T.keygate_audit_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'keygate: the audit log is append-only; % on keygate_audit is refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
    END $$`,
    `CREATE TRIGGER keygate_audit_no_update_or_delete BEFORE UPDATE OR DELETE ON T.keygate_audit
      FOR EACH ROW EXECUTE FUNCTION T.keygate_audit_is_append_only()`,
    `CREATE TRIGGER keygate_audit_no_truncate BEFORE TRUNCATE ON T.keygate_audit
      FOR EACH STATEMENT EXECUTE FUNCTION T.keygate_audit_is_append_only()`,
  ],
  // 6: suspension. The status check admits 'suspended'; the trigger keeping 'revoked' final stays as it is.
  [
    'ALTER TABLE T.keygate_keys DROP CONSTRAINT keygate_keys_status_check',
    `ALTER TABLE T.keygate_keys ADD CONSTRAINT keygate_keys_status_check CHECK (status IN ('active', 'suspended', 'revoked'))`,
    'ALTER TABLE T.keygate_keys ADD COLUMN suspended_at timestamptz',
    'ALTER TABLE T.keygate_keys ADD COLUMN suspended_reason text',
  ],
  // 7: the outbox. Events are written in the transaction of the key write that caused them, with one
  // delivery per matching endpoint; dispatchers claim deliveries with FOR UPDATE SKIP LOCKED and a lease.
  [
    `CREATE TABLE T.keygate_outbox (
      id text COLLATE "C" PRIMARY KEY,
      account_id text NOT NULL,
      type text NOT NULL,
      at timestamptz NOT NULL,
      data jsonb NOT NULL
    )`,
    `CREATE TABLE T.keygate_webhook_endpoints (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      url text NOT NULL,
      secret text NOT NULL,
      event_types jsonb NOT NULL,
      enabled boolean NOT NULL,
      created_at timestamptz NOT NULL,
      disabled_at timestamptz,
      failing_since timestamptz
    )`,
    'CREATE INDEX keygate_webhook_endpoints_account ON T.keygate_webhook_endpoints (account_id, created_at)',
    `CREATE TABLE T.keygate_webhook_deliveries (
      id text COLLATE "C" PRIMARY KEY,
      event_id text NOT NULL,
      endpoint_id text NOT NULL,
      account_id text NOT NULL,
      event_type text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      last_status_code integer,
      last_error text,
      last_attempt_at timestamptz,
      next_attempt_at timestamptz,
      lease_token text,
      leased_until timestamptz,
      created_at timestamptz NOT NULL,
      delivered_at timestamptz
    )`,
    `CREATE INDEX keygate_webhook_deliveries_due ON T.keygate_webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    'CREATE INDEX keygate_webhook_deliveries_account ON T.keygate_webhook_deliveries (account_id, id)',
  ],
  // 8: retention (docs/guide/retention.md). The audit log lets a DELETE through only for an entry older
  // than the cutoff `prune` recorded (one row, only ever moved later); UPDATE and TRUNCATE stay refused.
  // Indexes for deleting by age in batches: audit entries and outbox events by time, usage by day,
  // deliveries by event.
  [
    `CREATE TABLE T.keygate_audit_retention (
      id smallint PRIMARY KEY CHECK (id = 1),
      cutoff timestamptz NOT NULL
    )`,
    `INSERT INTO T.keygate_audit_retention (id, cutoff) VALUES (1, '1970-01-01 00:00:00+00')`,
    `CREATE FUNCTION T.keygate_audit_deletes_past_retention() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM T.keygate_audit_retention WHERE id = 1 AND cutoff > OLD.at) THEN
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'keygate: the audit log is append-only; DELETE on keygate_audit is refused (but of an entry older than the retention cutoff)'
        USING ERRCODE = 'insufficient_privilege';
    END $$`,
    'DROP TRIGGER keygate_audit_no_update_or_delete ON T.keygate_audit',
    `CREATE TRIGGER keygate_audit_no_update BEFORE UPDATE ON T.keygate_audit
      FOR EACH ROW EXECUTE FUNCTION T.keygate_audit_is_append_only()`,
    `CREATE TRIGGER keygate_audit_no_delete BEFORE DELETE ON T.keygate_audit
      FOR EACH ROW EXECUTE FUNCTION T.keygate_audit_deletes_past_retention()`,
    'CREATE INDEX keygate_audit_at ON T.keygate_audit (at)',
    'CREATE INDEX keygate_usage_day ON T.keygate_usage (day)',
    'CREATE INDEX keygate_outbox_at ON T.keygate_outbox (at, id)',
    'CREATE INDEX keygate_webhook_deliveries_event ON T.keygate_webhook_deliveries (event_id)',
  ],
];
