/**
 * @svc/importers: readers of other panels' stores (docs/import.md). Each turns a source's
 * records into the domain's ImportBatch and writes nothing; the domain decides what they become.
 */
export { read3xui, type XuiSource } from './3x-ui/read-3x-ui.ts';
export { ImportSourceError } from './import-source-error.ts';
export { type MarzbanSource, readMarzban } from './marzban/read-marzban.ts';
export { MARZNESHIN_AUTHS, type MarzneshinAuth } from './marzneshin/marzneshin-credentials.ts';
export { type MarzneshinSource, readMarzneshin } from './marzneshin/read-marzneshin.ts';
export { type RemnawaveSource, readRemnawave } from './remnawave/read-remnawave.ts';
export { type PostgresQuery, postgresStore, postgresStoreOf, type SourceStore, sqliteStore } from './source-store.ts';
export { XRAY_CONFIG_MAX_BYTES, xrayConfigInbounds } from './xray-config-inbounds.ts';
