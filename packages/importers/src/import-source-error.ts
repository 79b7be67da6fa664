/** A source store that cannot be read as the source named: corrupt, foreign, or of a schema we do not know. Nothing was written. */
export class ImportSourceError extends Error {
  override readonly name = 'ImportSourceError';
}
