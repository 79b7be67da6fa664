import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { issueEnrollToken } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, WRITERS } from '@svc/http';
import { IdParam, json } from '../../schemas.ts';

export const EnrollTokenSchema = z
  .object({
    token: z.string().openapi({
      description:
        'Shown once; only its hash is stored. Valid for one enrollment until expires_at (grpc.enroll_token_ttl_seconds, default 24 h). ' +
        'The agent sends it to Enroll with a CSR of a key it made itself, which must be ECDSA P-256 or Ed25519 (an RSA key is refused with INVALID_ARGUMENT and the token stays usable).',
    }),
    expires_at: z.string().openapi({ format: 'date-time' }),
    node_id: z.string(),
    grpc_endpoint: z.string().openapi({
      description:
        'host:port of the agent gateway (SVC_GRPC_PUBLIC_ENDPOINT, else the first SVC_GRPC_PUBLIC_HOSTS entry and SVC_GRPC_PORT)',
    }),
    ca_cert_pem: z
      .string()
      .openapi({ description: 'The internal CA certificate: the agent verifies the gateway with it from its first connection' }),
    ca_cert_sha256: z.string().openapi({ description: 'SHA-256 of the CA certificate (DER), lower-case hex' }),
    install_command: z.string().openapi({
      description:
        'The one line to run as root on the server that becomes this node: `curl -fsSL <public base URL>/agent/install.sh | sh -s -- --token … --ca-sha256 …`. ' +
        'The script downloads the agent from this control plane and checks its SHA-256, installs Xray (or uses --engine-bin), writes the systemd unit, enrolls and starts the service; the token is an argument, never part of a URL',
      example: 'curl -fsSL https://panel.example.com/agent/install.sh | sh -s -- --token 3q2-7w… --ca-sha256 9f86d0…',
    }),
  })
  .openapi('NodeEnrollToken');

export const route = defineRoute({
  method: 'post',
  path: '/nodes/{id}/enroll-token',
  tags: ['nodes'],
  summary: 'Issue or re-issue the one-time enrollment token (the previous one stops working)',
  description:
    'The answer holds what `svc-agent enroll` needs: the token, the gateway endpoint and the CA to pin. ' +
    'Enroll accepts a CSR of an ECDSA P-256 or Ed25519 key only; RSA is refused (INVALID_ARGUMENT).',
  auth: { scope: 'admin', roles: WRITERS },
  request: { params: IdParam },
  responses: { 201: json(EnrollTokenSchema, 'Issued'), 404: { description: 'No such node' } },
});

export const register = (app: OpenAPIHono<AppEnv>) =>
  app.openapi(route, async (c) => c.json(await issueEnrollToken(actorContext(c), c.req.valid('param').id), 201));
