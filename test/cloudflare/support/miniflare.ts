// A Miniflare 3 instance (workerd, in memory: nothing persists) with a pool of empty D1 databases and
// KV namespaces, used from Node through their bindings. Each test takes fresh ones; `dispose` ends
// the workerd process.
//
// Miniflare's proxy sends each binding call over a kept-alive HTTP connection to workerd. A call sent
// on a connection workerd has just closed as idle fails with `UND_ERR_SOCKET` before workerd reads it
// (cloudflare/workers-sdk#7376). The bindings handed out here send such a call again, at most twice;
// every other failure reaches the test as it was.

import type { D1Like, D1StatementLike, KVLike } from 'keygate/cloudflare';
import { Miniflare } from 'miniflare';

export class MiniflarePool {
  private readonly mf: Miniflare;
  private next = 0;

  constructor(private readonly size = 100) {
    this.mf = new Miniflare({
      modules: true,
      script: 'export default { fetch() { return new Response(null, { status: 404 }) } }',
      d1Databases: Array.from({ length: size }, (_, i) => `DB${i}`),
      kvNamespaces: Array.from({ length: size }, (_, i) => `KV${i}`),
    });
  }

  /** A D1 database and a KV namespace no other test has used. */
  async take(): Promise<{ db: D1Like; kv: KVLike }> {
    const i = this.next++;
    if (i >= this.size) throw new Error(`the pool has ${this.size} databases; raise its size`);
    const db = (await this.mf.getD1Database(`DB${i}`)) as unknown as D1Like;
    const kv = (await this.mf.getKVNamespace(`KV${i}`)) as unknown as KVLike;
    return { db: database(db), kv: namespace(kv) };
  }

  dispose(): Promise<void> {
    return this.mf.dispose();
  }
}

const RESENDS = 2;

/** Whether `err` is undici's "the other side closed the connection" under a proxied call. */
function closedUnder(err: unknown): boolean {
  return err instanceof TypeError && (err.cause as { code?: unknown } | undefined)?.code === 'UND_ERR_SOCKET';
}

async function resent<T>(call: () => Promise<T>): Promise<T> {
  for (let resends = 0; ; resends++) {
    try {
      return await call();
    } catch (err) {
      if (resends === RESENDS || !closedUnder(err)) throw err;
    }
  }
}

const proxied = new WeakMap<D1StatementLike, D1StatementLike>();

function statement(inner: D1StatementLike): D1StatementLike {
  const outer: D1StatementLike = {
    bind: (...values) => statement(inner.bind(...values)),
    first: <T>() => resent(() => inner.first<T>()),
    all: <T>() => resent(() => inner.all<T>()),
    run: <T>() => resent(() => inner.run<T>()),
  };
  proxied.set(outer, inner);
  return outer;
}

/** D1's `exec` (a script of statements) is no part of `D1Like`; migration tests call it. */
type Executing = D1Like & { exec(script: string): Promise<unknown> };

function database(inner: D1Like): D1Like {
  const outer: Executing = {
    exec: (script) => resent(() => (inner as Executing).exec(script)),
    prepare: (query) => statement(inner.prepare(query)),
    batch: <T>(statements: D1StatementLike[]) =>
      resent(() => inner.batch<T>(statements.map((s) => proxied.get(s) ?? s))),
  };
  return outer;
}

function namespace(inner: KVLike): KVLike {
  return {
    get: (key) => resent(() => inner.get(key)),
    put: (key, value, options) => resent(() => inner.put(key, value, options)),
    delete: (key) => resent(() => inner.delete(key)),
  };
}
