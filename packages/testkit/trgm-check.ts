import { PGlite } from '@electric-sql/pglite';
import { fromPGlite, migrateToLatest, PGLITE_EXTENSIONS } from '@svc/db';
import { sql } from 'kysely';

const p = await PGlite.create({ extensions: PGLITE_EXTENSIONS });
const h = fromPGlite(p);
await migrateToLatest(h.db);
console.log((await sql`select indexname from pg_indexes where indexname like '%trgm%'`.execute(h.db)).rows);
const c = await p.clone();
console.log((await c.query(`explain select id from clients where email ilike '%abc%'`)).rows);
