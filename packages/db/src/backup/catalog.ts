import { type Kysely, sql } from 'kysely';
import { BackupError } from './errors.ts';

/** kysely's lock table: recreated on restore, never dumped (its one row is a lock, not data). */
export const MIGRATION_LOCK_TABLE = 'kysely_migration_lock';

/** The tables of the current schema with their columns in order (every column, generated ones flagged). */
export async function readTables(db: Kysely<any>): Promise<Map<string, { columns: string[]; generated: Set<string> }>> {
  const { rows } = await sql<{ table: string; column: string; generated: boolean }>`
    select c.table_name as "table", c.column_name as "column", c.is_generated <> 'NEVER' as generated
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
    order by c.table_name, c.ordinal_position`.execute(db);
  const tables = new Map<string, { columns: string[]; generated: Set<string> }>();
  for (const r of rows) {
    if (r.table === MIGRATION_LOCK_TABLE) continue;
    let t = tables.get(r.table);
    if (!t) {
      t = { columns: [], generated: new Set() };
      tables.set(r.table, t);
    }
    t.columns.push(r.column);
    if (r.generated) t.generated.add(r.column);
  }
  return tables;
}

/** Every base table of the current schema, kysely's lock table included. */
export async function allTableNames(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(db);
  return rows.map((r) => r.name);
}

/** Functions the migrations made in the current schema (trigger functions), as signatures `drop function` takes. */
export async function allFunctionSignatures(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ sig: string }>`
    select p.oid::regprocedure::text as sig from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = current_schema()
       -- an extension's own functions (pg_trgm's) are its to keep
       and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
     order by 1`.execute(db);
  return rows.map((r) => r.sig);
}

/** Foreign keys between tables of the current schema: child references parent. */
export async function readForeignKeys(db: Kysely<any>): Promise<Array<{ child: string; parent: string }>> {
  const { rows } = await sql<{ child: string; parent: string }>`
    select distinct cl.relname as child, pr.relname as parent
    from pg_constraint co
    join pg_class cl on cl.oid = co.conrelid
    join pg_class pr on pr.oid = co.confrelid
    join pg_namespace n on n.oid = cl.relnamespace
    where co.contype = 'f' and n.nspname = current_schema()`.execute(db);
  return rows;
}

/**
 * Tables in an order that inserts each after the tables it references (ties by name, so the
 * order is the same every time). A table referencing itself is fine (its rows go in one
 * statement); a cycle between tables has no such order and is refused.
 */
export function insertOrder(tables: string[], fks: Array<{ child: string; parent: string }>): string[] {
  const waiting = new Map(tables.map((t) => [t, new Set<string>()]));
  for (const { child, parent } of fks) if (child !== parent && waiting.has(child) && waiting.has(parent)) waiting.get(child)?.add(parent);
  const order: string[] = [];
  while (waiting.size) {
    const ready = [...waiting]
      .filter(([, deps]) => deps.size === 0)
      .map(([t]) => t)
      .sort();
    if (!ready.length)
      throw new BackupError(`the tables ${[...waiting.keys()].join(', ')} reference each other in a cycle; no insert order exists`);
    for (const t of ready) {
      waiting.delete(t);
      order.push(t);
      for (const deps of waiting.values()) deps.delete(t);
    }
  }
  return order;
}

/** Sequences carry state a table dump does not; none exist today, and a backup that would lose one is refused. */
export async function sequenceNames(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select sequence_name as name from information_schema.sequences where sequence_schema = current_schema()`.execute(db);
  return rows.map((r) => r.name);
}
