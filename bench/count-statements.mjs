// Counts the statements a pg Pool sends: every statement goes through a pooled connection's `query`
// (pg's own `pool.query` checks one out with a callback, transactions with a promise), so each
// connection's `query` is wrapped once, where it is handed out, and adds one to `counter[field]`.

/**
 * Wraps `pool.connect` so that every statement sent on one of its connections adds 1 to
 * `counter[field]`; returns the pool.
 *
 * @example
 * const counter = { count: 0 };
 * countStatements(new pg.Pool({ connectionString }), counter, 'count');
 */
export function countStatements(pool, counter, field) {
  const wrapped = new WeakSet();
  const counted = (conn) => {
    if (conn && !wrapped.has(conn)) {
      wrapped.add(conn);
      const q = conn.query.bind(conn);
      conn.query = (...a) => {
        counter[field]++;
        return q(...a);
      };
    }
    return conn;
  };
  const connect = pool.connect.bind(pool);
  pool.connect = (callback) =>
    callback ? connect((err, conn, release) => callback(err, counted(conn), release)) : connect().then(counted);
  return pool;
}
