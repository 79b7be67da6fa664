import { isStorableText, TEXT_RULE } from '@svc/domain';
import { setupOwner, type TestServer } from '@svc/testkit';
import { encodeHostileSegment, hostileText } from '@svc/testkit/hostile-text';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminApi } from './harness.ts';

// Issue 12, "Checked by": random Unicode (NUL, lone surrogates, RTL and bidi marks, BOM,
// emoji and combining marks, 1 MB strings) in every string field of a valid-looking body, in
// keys and in path ids of every write route the OpenAPI document declares. No answer is >= 500,
// no error is logged, and a refused call changes no table (row counts and newest updated_at).
// Seeded: a failure prints the seed and path that reproduce it.

const SEED = 1212;
const RUNS_PER_ROUTE = 16;
/** Audit entries that record a refusal itself (a failed sign-in must leave a trace): not a write of the input. */
const REFUSAL_AUDITS = ['auth.login_failed', 'auth.forbidden', 'auth.token_rejected', 'auth.refresh_failed', 'auth.refresh_reuse_detected'];
/** Ends the caller's own session: every later call would be a 401, proving nothing. */
const SKIPPED = new Set(['post /api/v1/auth/logout']);

let s: TestServer;
let token: string;
let doc: any;
let fingerprintQuery: ReturnType<typeof sql<{ t: string; n: string; u: string | null }>>;

beforeAll(async () => {
  s = await startAdminApi();
  token = (await setupOwner(s)).access_token;
  doc = (await s.api.get('/api/v1/openapi.json')).body;
  // This test's tables only, read from its own schema: Kysely's introspection reads every schema
  // of a PostgreSQL server and failed when another test dropped its schema meanwhile.
  const { rows: tables } = await sql<{ name: string; updated: boolean }>`
    select t.table_name as name,
           exists (select 1 from information_schema.columns c
                    where c.table_schema = t.table_schema and c.table_name = t.table_name and c.column_name = 'updated_at') as updated
      from information_schema.tables t
     where t.table_schema = current_schema() and t.table_type = 'BASE TABLE' and t.table_name not like 'kysely%'
     order by t.table_name`.execute(s.deps.db);
  fingerprintQuery = sql<{ t: string; n: string; u: string | null }>`${sql.join(
    tables.map(
      (t) =>
        sql`select ${t.name} as t, count(*)::text as n, ${t.updated ? sql`max(updated_at)::text` : sql`null::text`} as u from ${sql.table(t.name)}${
          t.name === 'audit_log' ? sql` where action not in (${sql.join(REFUSAL_AUDITS.map((a) => sql`${a}`))})` : sql``
        }`,
    ),
    sql` union all `,
  )}`;
});
afterAll(() => s.stop());

const fingerprint = async () => JSON.stringify((await fingerprintQuery.execute(s.deps.db)).rows);

// --- valid-looking bodies from the document's schemas -------------------------------------

const deref = (schema: any): any => {
  let out = schema;
  while (out?.$ref) out = doc.components.schemas[out.$ref.split('/').pop()];
  return out ?? {};
};

function sample(schemaIn: any, depth = 0): unknown {
  const schema = deref(schemaIn);
  if (depth > 6) return null;
  if (schema.enum) return schema.enum[0];
  if ('const' in schema) return schema.const;
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((p: any) => sample(p, depth + 1)));
  if (schema.oneOf ?? schema.anyOf) return sample((schema.oneOf ?? schema.anyOf)[0], depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, prop] of Object.entries<any>(schema.properties ?? {})) out[key] = sample(prop, depth + 1);
      return out;
    }
    case 'array':
      return [sample(schema.items ?? {}, depth + 1)];
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, Math.min(schema.maximum ?? 443, 443));
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'email') return 'probe@example.com';
      if (schema.format === 'date-time') return '2030-01-01T00:00:00Z';
      if (schema.format === 'uri' || schema.format === 'url') return 'https://example.com/x';
      return 'sample'.padEnd(schema.minLength ?? 0, 'x');
    default:
      return 'sample';
  }
}

/** Paths (arrays of keys) of every string leaf, and of every object, in a sample body. */
function shape(value: unknown, path: Array<string | number> = [], out = { strings: [] as any[][], objects: [] as any[][] }) {
  if (typeof value === 'string') out.strings.push(path);
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) shape(v, [...path, i], out);
  } else if (value && typeof value === 'object') {
    out.objects.push(path);
    for (const [k, v] of Object.entries(value)) shape(v, [...path, k], out);
  }
  return out;
}

function setAt(root: any, path: Array<string | number>, value: unknown) {
  let at = root;
  for (const key of path.slice(0, -1)) at = at[key];
  at[path[path.length - 1] as string | number] = value;
}

const mutation = fc.record({
  where: fc.constantFrom('value', 'value', 'key', 'path'),
  pick: fc.nat(),
  text: hostileText(),
});

// --- the property ---------------------------------------------------------------------------

const writeRoutes = async () => {
  const out: Array<{ method: string; path: string; schema: any }> = [];
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      if (!['post', 'put', 'patch', 'delete'].includes(method) || SKIPPED.has(`${method} ${path}`)) continue;
      const schema = op.requestBody?.content?.['application/json']?.schema;
      if (schema || path.includes('{')) out.push({ method, path, schema });
    }
  }
  return out;
};

describe('hostile Unicode in every write route of the admin API (issue 12.1)', () => {
  it('never answers >= 500, logs no error, and a refused call writes nothing', async () => {
    const routes = await writeRoutes();
    expect(routes.length).toBeGreaterThan(40);
    let calls = 0;
    for (const route of routes) {
      await fc.assert(
        fc.asyncProperty(mutation, async ({ where, pick, text }) => {
          const body = route.schema ? (sample(route.schema) as any) : undefined;
          let path = route.path.replace(/\{[^}]+\}/g, 'nosuchid');
          const { strings, objects } = shape(body);
          let placed: 'path' | 'body' | 'nowhere' = 'nowhere';
          if (where === 'path' || !body) {
            if (route.path.includes('{')) {
              path = route.path.replace(/\{[^}]+\}/g, encodeHostileSegment(text));
              placed = 'path';
            }
          } else if (where === 'value' && strings.length > 0) {
            setAt(body, strings[pick % strings.length] as any[], text);
            placed = 'body';
          } else if (objects.length > 0) {
            placed = 'body';
            const at = objects[pick % objects.length] as any[];
            const target = at.length === 0 ? body : at.reduce((o: any, k: any) => o[k], body);
            target[text] = 'x';
          }
          const before = await fingerprint();
          const res = await s.api.call(route.method.toUpperCase(), path, body, { token });
          calls++;
          expect(res.status, `${route.method} ${path.slice(0, 120)} -> ${res.text.slice(0, 300)}`).toBeLessThan(500);
          if (res.status >= 400) expect(await fingerprint(), `${route.method} ${route.path} refused but wrote`).toBe(before);
          // Text that cannot be stored is refused by the text rule, naming it, not by the database.
          // (In a path a lone surrogate arrives as an escape that does not decode: not text at all.)
          const unstorable = placed === 'body' ? !isStorableText(text) : placed === 'path' && text.includes('\u0000');
          if (unstorable && res.status === 400) expect(Object.values(res.body.errors ?? {}), res.text).toContain(TEXT_RULE);
        }),
        { seed: SEED, numRuns: RUNS_PER_ROUTE, endOnFailure: true },
      );
    }
    expect(calls).toBeGreaterThanOrEqual(routes.length * RUNS_PER_ROUTE);
    expect(s.logs.filter((l) => l.level >= 40 && l.err).map((l) => `${l.msg} ${l.err?.message ?? ''}`)).toEqual([]);
    // ~1,000 calls, each between two fingerprints of every table: more than the default minute on a busy 2-core machine.
  }, 240_000);
});
