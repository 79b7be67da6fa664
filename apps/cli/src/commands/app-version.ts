import { readFileSync } from 'node:fs';

/** This build's version, recorded in every backup archive's manifest. */
export const APP_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
