// A Miniflare 3 instance (workerd, in memory: nothing persists) with a pool of empty D1 databases and
// KV namespaces, used from Node through their bindings. Each test takes fresh ones; `dispose` ends
// the workerd process.

import type { D1Like, KVLike } from 'keygate/cloudflare';
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
    return { db, kv };
  }

  dispose(): Promise<void> {
    return this.mf.dispose();
  }
}
