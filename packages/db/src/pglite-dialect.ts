import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

export interface SessionResult {
  rows: unknown[];
  affectedRows?: number | undefined;
  /** Number of result columns (0 for statements that return no rows). */
  fields: number | unknown[];
}

/** One PGlite session: in process (PGlite itself) or on a worker thread (pglite-worker.ts). */
export interface PGliteSession {
  query(sql: string, params: unknown[]): Promise<SessionResult>;
  close(): Promise<void>;
  readonly closed: boolean;
}

/**
 * Kysely dialect for PGlite. PGlite is one session: two transactions must never interleave
 * on it, so the single connection is handed out under a lock, held by kysely for a whole
 * transaction and released after. (kysely-pglite 0.6 hands the shared session to every
 * caller without a lock, which lets concurrent requests' statements land inside each
 * other's transactions; hence our own ~50 lines.)
 */
export class PGliteDialect implements Dialect {
  constructor(private readonly pglite: PGliteSession) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite);
  }
  createIntrospector(db: Kysely<any>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  private queue: Array<() => void> = [];
  private held = false;

  constructor(private readonly pglite: PGliteSession) {
    this.connection = new PGliteConnection(pglite);
  }

  async init() {}

  acquireConnection(): Promise<DatabaseConnection> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve(this.connection);
    }
    return new Promise((resolve) => this.queue.push(() => resolve(this.connection)));
  }

  async releaseConnection() {
    const next = this.queue.shift();
    if (next) next();
    else this.held = false;
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings) {
    const level = settings.isolationLevel ? ` ISOLATION LEVEL ${settings.isolationLevel.toUpperCase()}` : '';
    const mode = settings.accessMode ? ` ${settings.accessMode.toUpperCase()}` : '';
    await conn.executeQuery(CompiledQuery.raw(`BEGIN${level}${mode}`));
  }
  async commitTransaction(conn: DatabaseConnection) {
    await conn.executeQuery(CompiledQuery.raw('COMMIT'));
  }
  async rollbackTransaction(conn: DatabaseConnection) {
    await conn.executeQuery(CompiledQuery.raw('ROLLBACK'));
  }
  async destroy() {
    if (!this.pglite.closed) await this.pglite.close();
  }
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: PGliteSession) {}
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const res = await this.pglite.query(query.sql, query.parameters as unknown[]);
    const rows = res.rows as R[];
    return res.affectedRows !== undefined ? { rows, numAffectedRows: BigInt(res.affectedRows) } : { rows };
  }
  // biome-ignore lint/correctness/useYield: PGlite cannot stream; kysely requires the method.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries');
  }
}
