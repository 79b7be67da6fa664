import { readFile, stat } from 'node:fs/promises';
import type { Config } from '@svc/config';
import { applyImport, type ImportReport, SYSTEM, withActor } from '@svc/domain';
import {
  ImportSourceError,
  type MarzneshinAuth,
  postgresStore,
  read3xui,
  readMarzban,
  readMarzneshin,
  readRemnawave,
  type SourceStore,
  sqliteStore,
} from '@svc/importers';
import { createRuntime } from '@svc/runtime';

/** The sources `svc import --from` reads (docs/import.md). */
export const IMPORT_SOURCES = ['marzban', 'marzneshin', '3x-ui', 'remnawave'] as const;
export type ImportFrom = (typeof IMPORT_SOURCES)[number];

export interface ImportArgs {
  from: ImportFrom;
  /** The source's store: an SQLite file (Marzban's db.sqlite3, 3x-ui's x-ui.db, Marzneshin's db.sqlite3) or a PostgreSQL URL (Remnawave, Marzneshin). */
  source: string;
  /** Marzneshin's AUTH_GENERATION_ALGORITHM, when it is not the default xxh128. */
  authAlgorithm?: MarzneshinAuth | undefined;
  /** Marzban's xray_config.json. */
  xrayConfig?: string | undefined;
  /** The source's name here (default: the kind): a re-import under it updates. */
  name?: string | undefined;
  /** Nodes (ids or names) the source's inbounds are bound on. */
  nodes: string[];
  /** The certificate (id) the source's TLS inbounds serve with here. */
  tlsCertificate?: string | undefined;
  dryRun: boolean;
  /** Print the report as JSON instead of lines. */
  json: boolean;
}

/** A source store larger than this is not read into memory (sql.js holds the whole file). */
export const IMPORT_FILE_MAX_BYTES = 1024 * 1024 * 1024;

const CLI_ACTOR = { ...SYSTEM, userAgent: 'svc-cli' };

/**
 * `svc import` (issue 34, docs/import.md): reads another panel's store (never writing to it),
 * prints what it maps and what it cannot carry, and unless --dry-run writes it in one
 * transaction. The source file is read before anything opens the data store.
 */
export async function importFrom(config: Config, args: ImportArgs): Promise<ImportReport> {
  const batch = await readSource(args);
  const rt = await createRuntime(config);
  try {
    const report = await applyImport(withActor(rt.deps, CLI_ACTOR), batch, {
      ...(args.name ? { sourceName: args.name } : {}),
      nodes: args.nodes,
      tlsCertificateId: args.tlsCertificate ?? null,
      dryRun: args.dryRun,
    });
    process.stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : reportLines(report));
    return report;
  } finally {
    await rt.close();
  }
}

/** The source read whole (and closed) before anything opens our own data store. */
async function readSource(args: ImportArgs) {
  const isUrl = /^postgres(ql)?:\/\//i.test(args.source);
  if (args.from === 'marzban' || args.from === '3x-ui') {
    if (isUrl) throw new ImportSourceError(`--from ${args.from} reads its SQLite file; give the file, not a URL`);
    const database = await readBounded(args.source, 'the source database');
    if (args.from === '3x-ui') return read3xui({ database });
    const xrayConfig = args.xrayConfig ? (await readBounded(args.xrayConfig, 'the xray config')).toString('utf8') : undefined;
    return readMarzban({ database, xrayConfig });
  }
  const what = `the ${args.from === 'marzneshin' ? 'Marzneshin' : 'Remnawave'} database`;
  const store: SourceStore = isUrl
    ? await postgresStore(args.source, what)
    : await sqliteStore(await readBounded(args.source, 'the source database'), what);
  try {
    return args.from === 'marzneshin'
      ? await readMarzneshin({ store, auth: args.authAlgorithm ?? 'xxh128' })
      : await readRemnawave({ store });
  } finally {
    await store.close();
  }
}

async function readBounded(path: string, what: string): Promise<Buffer> {
  const info = await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw new ImportSourceError(`${what} ${path} cannot be read: ${err.code ?? err.message}`);
  });
  if (!info.isFile()) throw new ImportSourceError(`${what} ${path} is not a file`);
  if (info.size > IMPORT_FILE_MAX_BYTES) throw new ImportSourceError(`${what} ${path} is larger than ${IMPORT_FILE_MAX_BYTES} bytes`);
  return readFile(path);
}

/** The report for a person: what was (or would be) made, then every record not carried, with why. */
export function reportLines(r: ImportReport): string {
  const lines = [
    `${r.dry_run ? 'dry run: nothing was written. ' : ''}${r.source.kind} "${r.source.name}"${r.source.version ? ` (schema ${r.source.version})` : ''}: ` +
      `${r.counts.users_created} users ${r.dry_run ? 'to create' : 'created'}, ${r.counts.users_updated} ${r.dry_run ? 'to update' : 'updated'}, ` +
      `${r.counts.access_groups_created} access groups, ${r.counts.inbound_profiles_created} inbound profiles, ` +
      `${r.counts.inbounds_created} inbounds ${r.dry_run ? 'to create' : 'created'}`,
    r.source.links_verifiable
      ? 'old subscription links: verified with the source secret'
      : 'old subscription links: NOT verifiable (no secret in the source)',
    '',
    'user -> subscription (client, status, access groups):',
    ...r.users.map(
      (u) =>
        `  ${u.username} -> ${u.action === 'create' && r.dry_run ? '(new)' : u.subscription_id} (${u.client_email}, ${u.status}${u.access_groups.length ? `, ${u.access_groups.join(', ')}` : ''})`,
    ),
    '',
    'source inbound -> access group, inbound profile (nodes it is bound on):',
    ...r.inbounds.map(
      (i) =>
        `  ${i.tag} (${i.protocol}, port ${i.port}) -> ${i.access_group}, ${i.profile ?? '(no profile)'}${i.nodes.length ? ` (${i.nodes.join(', ')})` : ''}`,
    ),
  ];
  if (r.not_carried.length) lines.push('', `not carried (${r.not_carried.length}):`, ...r.not_carried.map((n) => `  ${n.what}: ${n.why}`));
  return `${lines.join('\n')}\n`;
}
