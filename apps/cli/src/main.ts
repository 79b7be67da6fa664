import { ConfigError, loadConfig } from '@svc/config';
import { DataDirLockedError, isBackupRefusal, MigrationError } from '@svc/db';
import { isDomainError } from '@svc/domain';
import { stopOnSignals } from '@svc/runtime';
import { parseCommand, USAGE, UsageError } from './args.ts';
import { adminCreate, adminResetPassword } from './commands/admin.ts';
import { backup } from './commands/backup.ts';
import { type ImportArgs, importFrom } from './commands/import.ts';
import { migrate } from './commands/migrate.ts';
import { RestoreRefusedError, restore } from './commands/restore.ts';
import { startAllInOne } from './commands/start.ts';

async function main(argv: string[]): Promise<number> {
  const cmd = parseCommand(argv);
  if (cmd.name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config = loadConfig(process.env);
  switch (cmd.name) {
    case 'start': {
      // Signals are handled from the first moment: a stop during start-up waits for the
      // start to finish, then closes cleanly (PGlite's lock and files included).
      const starting = startAllInOne(config);
      stopOnSignals('svc', async () => {
        const svc = await starting.catch(() => undefined);
        await svc?.stop();
      });
      await starting;
      return -1; // keep running
    }
    case 'migrate':
      await migrate(config, { dryRun: cmd.dryRun ?? false });
      return 0;
    case 'admin create':
      await adminCreate(config, { email: cmd.email as string, role: cmd.role ?? 'owner', passwordStdin: cmd.passwordStdin });
      return 0;
    case 'backup':
      await backup(config, cmd.backup ?? { includeKey: false, force: false });
      return 0;
    case 'restore':
      await restore(config, cmd.backup ?? { includeKey: false, force: false });
      return 0;
    case 'import':
      await importFrom(config, cmd.import as ImportArgs);
      return 0;
    case 'admin reset-password':
      await adminResetPassword(config, { email: cmd.email as string, passwordStdin: cmd.passwordStdin });
      return 0;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof ConfigError) process.stderr.write(`svc: refusing to start, ${err.message}\n`);
    else if (err instanceof DataDirLockedError || err instanceof RestoreRefusedError || isBackupRefusal(err))
      process.stderr.write(`svc: ${(err as Error).message}\n`);
    else if (err instanceof MigrationError) process.stderr.write(`svc: ${err.message}\n`);
    else if ((err as Error)?.name === 'ImportSourceError') process.stderr.write(`svc: ${(err as Error).message}; nothing was imported\n`);
    else if (err instanceof UsageError) process.stderr.write(`svc: ${err.message}\n\n${USAGE}\n`);
    else if (isDomainError(err)) {
      const fields = err.errors
        ? Object.entries(err.errors)
            .map(([k, v]) => `\n  ${k}: ${v}`)
            .join('')
        : '';
      process.stderr.write(`svc: ${err.message}${fields}\n`);
    } else process.stderr.write(`svc: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(err instanceof ConfigError ? 78 : 1);
  },
);
