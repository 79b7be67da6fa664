import { UsageError } from '../args.ts';

/** The flags of `svc backup` and `svc restore`, merged into the CLI's one parseArgs. */
export const BACKUP_OPTIONS = {
  out: { type: 'string' },
  'include-key': { type: 'boolean', default: false },
  'passphrase-file': { type: 'string' },
  force: { type: 'boolean', default: false },
} as const;

export interface BackupArgs {
  /** backup: where the archive goes (a file, or a folder for a generated name). */
  out?: string;
  includeKey: boolean;
  passphraseFile?: string;
  /** restore: the archive. */
  file?: string;
  force: boolean;
}

export function parseBackupArgs(
  positionals: string[],
  values: { out?: string; 'include-key'?: boolean; 'passphrase-file'?: string; force?: boolean },
): BackupArgs {
  const [command, file, ...extra] = positionals;
  const args: BackupArgs = {
    includeKey: values['include-key'] ?? false,
    force: values.force ?? false,
    ...(values['passphrase-file'] ? { passphraseFile: values['passphrase-file'] } : {}),
  };
  if (command === 'backup') {
    if (file !== undefined) throw new UsageError(`svc backup takes no argument (give the archive's place with --out), not "${file}"`);
    if (values.force) throw new UsageError('--force is an option of svc restore');
    if (values['passphrase-file'] && !args.includeKey) throw new UsageError('--passphrase-file goes with --include-key');
    return { ...args, ...(values.out ? { out: values.out } : {}) };
  }
  if (!file) throw new UsageError('svc restore: name the archive (svc restore FILE)');
  if (extra.length) throw new UsageError(`svc restore takes one archive, not ${positionals.length - 1}`);
  if (values.out || values['include-key']) throw new UsageError('--out and --include-key are options of svc backup');
  return { ...args, file };
}
