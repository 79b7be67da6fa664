import { readFileSync } from 'node:fs';
import { checkPassphrase } from '@svc/db';
import { UsageError } from '../args.ts';
import { ask } from '../password-input.ts';

/**
 * The passphrase that seals (backup) or opens (restore) the installation key in an archive:
 * from a file for automation (its first line), else typed at a hidden prompt (twice when it
 * seals, so a typo does not lock the key away).
 */
export async function readPassphrase(opts: { file?: string | undefined; confirm: boolean; why: string }): Promise<string> {
  let passphrase: string;
  if (opts.file) {
    try {
      passphrase = readFileSync(opts.file, 'utf8').split(/\r?\n/)[0] ?? '';
    } catch (err) {
      throw new UsageError(`cannot read the passphrase file ${opts.file}: ${(err as Error).message}`);
    }
  } else {
    if (!process.stdin.isTTY) throw new UsageError(`${opts.why}: no terminal to ask for the passphrase, give it with --passphrase-file`);
    passphrase = await ask('Passphrase: ');
    if (opts.confirm && (await ask('Repeat passphrase: ')) !== passphrase) throw new UsageError('the passphrases differ');
  }
  if (opts.confirm) {
    try {
      checkPassphrase(passphrase);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  return passphrase;
}
