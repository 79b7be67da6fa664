import type { Config } from '@svc/config';
import { type Logger, pino } from 'pino';

/**
 * Structured JSON logs to stdout, one object a line; `svc` names the deployable (`svc` for the
 * all-in-one). Credentials that could reach a log line are redacted. Field names: docs/observability.md.
 */
export function createLogger(config: Pick<Config, 'log'>, destination?: NodeJS.WritableStream, app = 'svc'): Logger {
  return pino(
    {
      level: config.log.level,
      base: { svc: app },
      redact: {
        paths: [
          'password',
          '*.password',
          'refresh_token',
          '*.refresh_token',
          'access_token',
          '*.access_token',
          'req.headers.authorization',
          'token',
          '*.token',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? process.stdout,
  );
}
