export { BackupError, isBackupRefusal } from './errors.ts';
export { checkPassphrase, MIN_PASSPHRASE_LENGTH, WrongPassphraseError } from './key-envelope.ts';
export { KEY_MISSING_WARNING, type Manifest, NewerArchiveError } from './manifest.ts';
export { readManifest, type VerifiedArchive, verifyArchive } from './read-archive.ts';
export { type RestoreResult, restoreBackup, TargetNotEmptyError, targetTables } from './restore-backup.ts';
export { backupFileName, pruneBackups, type RetentionPolicy } from './retention.ts';
export { ArchiveFormatError } from './tar.ts';
export { type BackupResult, writeBackup } from './write-backup.ts';
