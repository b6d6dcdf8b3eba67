// SQLite files for tests: each in a temporary folder of its own under the system's temp folder,
// every database opened here closed and every folder removed by `removeAll` (call it in afterAll).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type SqliteDriver, type SqlValue, sqliteDriver } from 'keygate/sqlite';
import { RUN_ID } from './services.js';

type Db = InstanceType<typeof Database>;

/** The SQLite files and connections of one test file. */
export class SqliteFiles {
  private readonly folders: string[] = [];
  private readonly open: Db[] = [];

  /** A path to a new, empty database file. */
  path(): string {
    const folder = mkdtempSync(join(tmpdir(), `keygate-sqlite-${RUN_ID}-`));
    this.folders.push(folder);
    return join(folder, 'keygate.db');
  }

  /** A connection to `path`, closed by `removeAll`. */
  connect(path: string): Db {
    const db = new Database(path);
    this.open.push(db);
    return db;
  }

  /** Closes every connection and removes every folder. */
  removeAll(): void {
    for (const db of this.open) if (db.open) db.close();
    for (const folder of this.folders) rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * A driver whose connection a test can close (every call then fails, as on an I/O error or a
 * database closed under the store) and open again, over a real better-sqlite3 connection each time.
 */
export function reopenable(files: SqliteFiles, path: string) {
  let db = files.connect(path);
  let current = sqliteDriver(db);
  const driver: SqliteDriver = {
    isKeygateSqliteDriver: true,
    run: (sql: string, params?: readonly SqlValue[]) => current.run(sql, params),
    get: <R>(sql: string, params?: readonly SqlValue[]) => current.get<R>(sql, params),
    all: <R>(sql: string, params?: readonly SqlValue[]) => current.all<R>(sql, params),
    exec: (sql: string) => current.exec(sql),
    transaction: <T>(fn: () => T, busyTimeoutMs: number) => current.transaction(fn, busyTimeoutMs),
  };
  return {
    driver,
    close: (): void => {
      db.close();
    },
    reopen: () => {
      db = files.connect(path);
      current = sqliteDriver(db);
    },
  };
}
