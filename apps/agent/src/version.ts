import { readFileSync } from 'node:fs';

/** The agent's version (Hello.agent_version, EnrollRequest.agent_version): its package version. */
export const AGENT_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
