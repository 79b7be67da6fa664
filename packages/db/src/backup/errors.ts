/** A backup or restore refused, in words for the operator (the CLI prints the message alone). */
export class BackupError extends Error {}

export const isBackupRefusal = (err: unknown): err is BackupError => err instanceof BackupError;
