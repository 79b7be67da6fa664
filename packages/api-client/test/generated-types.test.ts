import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { publishedDocuments, typesFor } from '../scripts/documents.ts';

/**
 * The committed client types (src/gen) are what openapi-typescript makes of the documents the
 * servers publish now: a route, schema or field changed without `pnpm --filter @svc/api-client
 * run generate` fails here, and with it CI.
 */
describe('generated API client types', () => {
  it('src/gen/admin.ts and src/gen/portal.ts match GET /api/v1/openapi.json and /portal/v1/openapi.json', async () => {
    const docs = await publishedDocuments();
    for (const name of ['admin', 'portal'] as const) {
      const committed = readFileSync(new URL(`../src/gen/${name}.ts`, import.meta.url), 'utf8');
      expect(committed, `src/gen/${name}.ts drifted from its document: run \`pnpm --filter @svc/api-client run generate\``).toBe(
        await typesFor(name, docs[name]),
      );
    }
  });
});
