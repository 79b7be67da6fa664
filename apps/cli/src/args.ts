import { parseArgs } from 'node:util';
import type { AdminRole as AdminRoleName } from '@svc/db';
import { AdminRole } from '@svc/domain';
import { MARZNESHIN_AUTHS, type MarzneshinAuth } from '@svc/importers';
import { BACKUP_OPTIONS, type BackupArgs, parseBackupArgs } from './commands/backup-args.ts';
import { IMPORT_SOURCES, type ImportArgs, type ImportFrom } from './commands/import.ts';

export class UsageError extends Error {}

export const USAGE = `usage: svc <command>

  svc start                                   run every surface in one process (all-in-one)
  svc migrate [--dry-run]                     apply database migrations and exit (--dry-run: list
                                              the ones that would run, change nothing)
  svc admin create --email E --role R         create an admin (R: owner | admin | viewer)
        [--password-stdin]                    read the password from stdin instead of a prompt
  svc admin reset-password --email E          set a new password and end the admin's sessions
        [--password-stdin]
  svc backup [--out FILE|DIR]                 write a backup archive of the database (docs/backups.md)
        [--include-key]                       put the installation key in it, sealed with a passphrase
        [--passphrase-file F]                 read that passphrase from a file instead of a prompt
  svc restore FILE [--force]                  check an archive, then restore it (--force: replace a non-empty database)
        [--passphrase-file F]                 the passphrase of an archive holding the installation key
  svc import --from marzban|marzneshin|3x-ui|remnawave
        --source FILE|URL                     move users in from another panel, their links intact (docs/import.md):
                                              its SQLite file, or its PostgreSQL URL (Remnawave, Marzneshin)
        [--xray-config FILE]                  Marzban's xray_config.json (its inbounds)
        [--auth-algorithm xxh128|plain]       Marzneshin's AUTH_GENERATION_ALGORITHM (default xxh128)
        [--name NAME]                         the source's name here; importing again under it updates
        [--node NODE]...                      bind the source's inbounds on this node (id or name), at their ports
        [--tls-certificate ID]                the certificate the source's TLS inbounds serve with here
        [--dry-run] [--json]                  print the mapping and what cannot be carried, write nothing

Configuration comes from the environment (SVC_*, DATABASE_URL, REDIS_URL) and the optional
file named by SVC_CONFIG_FILE; see README.md.`;

export interface Command {
  name: 'start' | 'migrate' | 'admin create' | 'admin reset-password' | 'backup' | 'restore' | 'import' | 'help';
  email?: string;
  role?: AdminRoleName;
  passwordStdin: boolean;
  /** migrate: list what would run, change nothing. */
  dryRun?: boolean;
  /** backup and restore: see backup-args.ts. */
  backup?: BackupArgs;
  /** import: see commands/import.ts. */
  import?: ImportArgs;
}

export function parseCommand(argv: string[]): Command {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      role: { type: 'string' },
      'password-stdin': { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      from: { type: 'string' },
      source: { type: 'string' },
      'xray-config': { type: 'string' },
      name: { type: 'string' },
      node: { type: 'string', multiple: true },
      'tls-certificate': { type: 'string' },
      'auth-algorithm': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      ...BACKUP_OPTIONS,
    },
  });
  const words = positionals.join(' ');
  const passwordStdin = values['password-stdin'] ?? false;
  if (values.help || words === '' || words === 'help') return { name: 'help', passwordStdin };
  if (words === 'migrate') return { name: words, passwordStdin, dryRun: values['dry-run'] ?? false };
  if (words === 'import') {
    const from = values.from;
    if (!from || !(IMPORT_SOURCES as readonly string[]).includes(from))
      throw new UsageError(
        `svc import: --from must be ${IMPORT_SOURCES.slice(0, -1).join(', ')} or ${IMPORT_SOURCES.at(-1)}${from ? `, not "${from}"` : ''}`,
      );
    if (!values.source) throw new UsageError("svc import: --source is required (the source panel's database file or URL)");
    const auth = values['auth-algorithm'];
    if (auth !== undefined && !(MARZNESHIN_AUTHS as readonly string[]).includes(auth))
      throw new UsageError(`svc import: --auth-algorithm must be ${MARZNESHIN_AUTHS.join(' or ')}, not "${auth}"`);
    return {
      name: 'import',
      passwordStdin,
      import: {
        from: from as ImportFrom,
        source: values.source,
        xrayConfig: values['xray-config'],
        name: values.name,
        nodes: values.node ?? [],
        tlsCertificate: values['tls-certificate'],
        authAlgorithm: auth as MarzneshinAuth | undefined,
        dryRun: values['dry-run'] ?? false,
        json: values.json ?? false,
      },
    };
  }
  if (values['dry-run']) throw new UsageError(`--dry-run is an option of svc migrate and svc import, not of svc ${words}`);
  if (words === 'start') return { name: words, passwordStdin };
  if (positionals[0] === 'backup' || positionals[0] === 'restore')
    return { name: positionals[0], passwordStdin, backup: parseBackupArgs(positionals, values) };
  if (words === 'admin create' || words === 'admin reset-password') {
    if (!values.email) throw new UsageError(`svc ${words}: --email is required`);
    if (words === 'admin create') {
      const role = AdminRole.safeParse(values.role ?? 'owner');
      if (!role.success) {
        const roles = AdminRole.options;
        throw new UsageError(`--role must be ${roles.slice(0, -1).join(', ')} or ${roles.at(-1)}, not "${values.role}"`);
      }
      return { name: words, email: values.email, role: role.data, passwordStdin };
    }
    return { name: words, email: values.email, passwordStdin };
  }
  throw new UsageError(`unknown command: svc ${words}`);
}
