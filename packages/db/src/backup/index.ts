export { WrongPassphraseError } from './key-envelope.ts';
export { KEY_MISSING_WARNING, type Manifest, NewerArchiveError } from './manifest.ts';
export { readManifest, type VerifiedArchive, verifyArchive } from './read-archive.ts';
export { type RestoreResult, restoreBackup, TargetNotEmptyError, targetTables } from './restore-backup.ts';
export { ArchiveFormatError } from './tar.ts';
export { type BackupResult, writeBackup } from './write-backup.ts';
