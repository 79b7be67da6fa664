import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { QueueImportInput, queueImport, ValidationError } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, limitBody, WRITERS } from '@svc/http';
import { json, problem } from '../../schemas.ts';
import { ImportJobSchema } from './schemas.ts';

const Upload = z
  .object({
    file: z.any().openapi({
      type: 'string',
      format: 'binary',
      description: "the old panel's SQLite file (Marzban's db.sqlite3, Marzneshin's db.sqlite3, 3x-ui's x-ui.db)",
    }),
    xray_config: z.any().optional().openapi({ type: 'string', format: 'binary', description: "Marzban's xray_config.json (its inbounds)" }),
    options: z.string().openapi({
      description:
        'JSON: {"from": "marzban"|"marzneshin"|"3x-ui", "source_name"?, "nodes"?: [id or name], "tls_certificate_id"?, "dry_run"?, "auth_algorithm"?: "xxh128"|"plain"}',
      example: '{"from":"marzban","nodes":["Oslo"],"dry_run":true}',
    }),
  })
  .openapi('ImportUpload');

/** The upload's own limit (http.import_body_limit_bytes), after the admin is known: the global one is not applied to this path. */
const limitUpload = limitBody(
  (c) => (c.get('deps') as { config: { http: { import_body_limit_bytes: number } } }).config.http.import_body_limit_bytes,
);

export const route = defineRoute({
  method: 'post',
  path: '/imports',
  tags: ['imports'],
  summary: "Import another panel's users from its uploaded SQLite file, as a job (docs/import.md)",
  description:
    'Answers at once with the job; GET /imports/{id} tells its progress and, when done, the report (every user and inbound mapped, every record not carried with why). Remnawave (PostgreSQL) is imported with `svc import --source <URL>`.',
  auth: { scope: 'admin', roles: WRITERS },
  middleware: [limitUpload],
  request: { body: { content: { 'multipart/form-data': { schema: Upload } } } },
  responses: {
    202: json(ImportJobSchema, 'Queued'),
    413: problem('The file is larger than http.import_body_limit_bytes'),
  },
});

const fileOf = async (v: unknown): Promise<Uint8Array | null> => (v instanceof Blob ? new Uint8Array(await v.arrayBuffer()) : null);

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => {
    const form = await c.req.parseBody().catch(() => {
      throw new ValidationError('invalid upload', { body: 'not a readable multipart/form-data body' });
    });
    const file = await fileOf(form.file);
    if (!file) throw new ValidationError('invalid upload', { file: 'required: the SQLite file, as a file field' });
    const xray = form.xray_config === undefined ? null : await fileOf(form.xray_config);
    if (form.xray_config !== undefined && !xray) throw new ValidationError('invalid upload', { xray_config: 'must be a file field' });
    let raw: unknown;
    try {
      raw = JSON.parse(typeof form.options === 'string' ? form.options : '');
    } catch {
      throw new ValidationError('invalid upload', { options: 'required: the options as JSON' });
    }
    const options = QueueImportInput.safeParse(raw);
    if (!options.success)
      throw new ValidationError(
        'invalid upload',
        Object.fromEntries(options.error.issues.map((i) => [`options.${i.path.join('.') || '(root)'}`, i.message])),
      );
    const job = await queueImport(
      actorContext(c),
      options.data,
      file,
      xray ? new TextDecoder('utf-8', { fatal: false }).decode(xray) : null,
    );
    return c.json(job, 202);
  });
