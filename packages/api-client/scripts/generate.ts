// Writes src/gen/admin.ts and src/gen/portal.ts from the documents the routers publish.
import { writeFileSync } from 'node:fs';
import { publishedDocuments, typesFor } from './documents.ts';

const docs = await publishedDocuments();
for (const name of ['admin', 'portal'] as const) {
  const path = new URL(`../src/gen/${name}.ts`, import.meta.url);
  writeFileSync(path, await typesFor(name, docs[name]));
  console.log(`wrote ${path.pathname}`);
}
