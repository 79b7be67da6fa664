import type { Config } from '@svc/config';
import { type Logger, pino } from 'pino';

/** Structured JSON logs to stdout. Credentials that could reach a log line are redacted. */
export function createLogger(config: Pick<Config, 'log'>, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level: config.log.level,
      base: { svc: 'control-plane' },
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
