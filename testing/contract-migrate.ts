import { KeyManager } from 'keygate';
import { ACCOUNT, type ContractCase, type ContractContext } from './contract-context.js';

async function migratesOnce({ fx, expect }: ContractContext): Promise<void> {
  if (!fx.unmigrated) throw new Error('options.hooks names unmigrated, so every fixture must have it');
  const { stores, drop } = await fx.unmigrated(2);
  const [a, b] = stores;
  if (!a || !b) throw new Error('unmigrated(2) must give two stores');
  try {
    const results = await Promise.all([a.migrate(), b.migrate()]);
    // One instance applied every migration, in order; the other found them applied and did nothing.
    const [none, all] = results.map((r) => [...r.applied]).sort((x, y) => x.length - y.length);
    expect(none).toEqual([]);
    expect(all?.length).toBeGreaterThan(0);
    expect(all).toEqual([...(all ?? [])].sort((x, y) => x - y));
    expect(await a.migrate()).toEqual({ applied: [] });
    expect(await b.migrate()).toEqual({ applied: [] });
    const { key } = await new KeyManager({ store: b }).create({ accountId: ACCOUNT, name: 'migrated', mode: 'test' });
    expect(await a.findById(key.id)).toEqual(await b.findById(key.id));
  } finally {
    await drop?.();
  }
}

/** The cases of the fixture hooks the options name. */
export function migrateCases(hooks: readonly string[] = []): ContractCase[] {
  if (!hooks.includes('unmigrated')) return [];
  return [['migrates once when two instances migrate at the same time, and a second migrate is a no-op', migratesOnce]];
}
