import { z } from 'zod';

/** The public HTTP port: the APIs, /sub, the web apps and the agent's download. */
export const httpSection = z
  .object({
    host: z.string().default('0.0.0.0'),
    port: z.number().int().min(0).max(65535).default(8080),
    /** Base of links handed to users (subscription URLs); defaults to http://localhost:{port}. */
    public_base_url: z.url().optional(),
    /** Take the client address from X-Forwarded-For (only behind a proxy you control). */
    trust_proxy: z.boolean().default(false),
    body_limit_bytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    /**
     * More ports every HTTP surface also answers on: an imported panel's own, which the links
     * customers hold name (3x-ui's subscription port 2096; docs/import.md).
     */
    extra_ports: z.array(z.number().int().min(1).max(65535)).max(8).default([]),
    /**
     * The largest source store an admin may upload to import (POST /api/v1/imports), checked
     * after the admin is known: the route is outside body_limit_bytes (docs/import.md).
     */
    import_body_limit_bytes: z
      .number()
      .int()
      .positive()
      .max(512 * 1024 * 1024)
      .default(256 * 1024 * 1024),
    /**
     * How long a portal process may answer GET /sub/{token} from memory (0 = read the
     * database on every request). Changes to a subscription, its client or its nodes drop
     * the cached answers at once (bus); this bounds only how stale the usage figures get.
     */
    sub_cache_seconds: z.number().int().min(0).max(3600).default(30),
    /**
     * The built admin panel (apps/admin-web's dist/), served at /admin/. Default: the
     * workspace's own build; the images set it to the copy they carry.
     */
    admin_web_dir: z.string().min(1).optional(),
    /**
     * The built customer portal (apps/portal-web's dist/), served at /portal/ beside
     * /portal/v1. Default: the workspace's own build; the images set it to their copy.
     */
    portal_web_dir: z.string().min(1).optional(),
    /**
     * The one-file agent (apps/agent's dist-one/: svc-agent-<version>.mjs and its .sha256),
     * served at /agent/ to the nodes that install it. Default: the workspace's own build.
     */
    agent_dist_dir: z.string().min(1).optional(),
  })
  .prefault({});
