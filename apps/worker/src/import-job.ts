import type { ImportBatch, ImportJobSource } from '@svc/domain';
import { read3xui, readMarzban, readMarzneshin, sqliteStore } from '@svc/importers';

/**
 * The reader of an uploaded source store for `imports.run` (the domain's runImportJob holds the
 * job's rules; the vendors' formats live in @svc/importers). Every uploadable source is an
 * SQLite file, read in memory through sql.js.
 */
export async function readUploadedSource(source: ImportJobSource): Promise<ImportBatch> {
  if (source.kind === 'marzban') return readMarzban({ database: source.file, xrayConfig: source.xrayConfig ?? undefined });
  if (source.kind === '3x-ui') return read3xui({ database: source.file });
  if (source.kind === 'marzneshin') {
    const store = await sqliteStore(source.file, 'the Marzneshin database');
    try {
      return await readMarzneshin({ store, auth: source.authAlgorithm });
    } finally {
      await store.close();
    }
  }
  throw new Error(`a ${source.kind} store is not uploaded: svc import reads it by its database URL`);
}
