import { z } from '@hono/zod-openapi';

const Timestamp = z.string().openapi({ format: 'date-time' });
const Source = z.enum(['marzban', 'marzneshin', '3x-ui', 'remnawave']);

export const ImportJobSchema = z
  .object({
    id: z.string(),
    from: Source,
    status: z.enum(['queued', 'running', 'done', 'failed']),
    options: z.object({
      source_name: z.string().optional(),
      nodes: z.array(z.string()),
      tls_certificate_id: z.string().nullable(),
      dry_run: z.boolean(),
      auth_algorithm: z.enum(['xxh128', 'plain']),
    }),
    file_bytes: z.number().int(),
    progress: z
      .object({ phase: z.enum(['queued', 'reading', 'importing', 'done']), done: z.number().int(), total: z.number().int() })
      .openapi({ description: 'importing: users done of total' }),
    report: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: 'when done: the import report (as `svc import --json` prints it): counts, users, inbounds, not_carried' }),
    error: z
      .string()
      .nullable()
      .openapi({ description: 'when failed: why (a foreign or damaged file, an unknown node); nothing was imported' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    finished_at: Timestamp.nullable(),
  })
  .openapi('ImportJob');
