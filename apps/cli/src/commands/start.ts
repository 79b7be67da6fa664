import { ADMIN_WEB_PATH, createAdminApi, registerAdminWeb, registerAgentFiles } from '@svc/admin-api';
import type { Config } from '@svc/config';
import { startGateway } from '@svc/control-plane';
import { createHttpService, publicPrefixOf } from '@svc/http';
import { createPortalApi, registerPortalWeb } from '@svc/portal-api';
import { createRuntime, listenLine, prepareBootstrap, startMetricsListener } from '@svc/runtime';
import { createWorker, registerPaymentWebhooks } from '@svc/worker';

/**
 * All-in-one: every HTTP surface in one process on one port, over PGlite (or DATABASE_URL) and
 * in-process adapters (or REDIS_URL), plus the agent gateway on its gRPC port: the admin API,
 * the customer surface (/portal/v1, GET /sub/{token}), the worker's payment webhook ingress
 * (POST /webhooks/payments/{provider}) and its job handlers.
 */
export async function startAllInOne(config: Config): Promise<{ stop(): Promise<void> }> {
  const rt = await createRuntime(config);
  const bootstrap = await prepareBootstrap(rt);
  const metrics = await startMetricsListener(rt).catch(async (err) => {
    await rt.close();
    throw err;
  });
  const admin = createAdminApi();
  const portal = createPortalApi();
  const http = createHttpService(
    rt.deps,
    (root) => {
      // A person who opens the address the start line names lands on the admin panel (setup first).
      root.get('/', (c) => c.redirect(`${publicPrefixOf(rt.config.http.public_base_url)}${ADMIN_WEB_PATH}/`, 302));
      root.route('/', admin.routes);
      registerAdminWeb(root, rt.config);
      registerAgentFiles(root, rt.config);
      root.route('/', portal.routes);
      registerPortalWeb(root, rt.config);
      registerPaymentWebhooks(root);
    },
    { extraPorts: true },
  );
  const bound = await http.start();
  // The agent gateway on its own TLS port (gRPC cannot share the HTTP/1.1 listener).
  const gateway = await startGateway(rt).catch(async (err) => {
    await metrics?.stop();
    await http.stop();
    await admin.stop();
    await portal.stop();
    await rt.close();
    throw err;
  });
  const listening = listenLine(rt.config, bound);
  rt.log.info({ ...listening.fields, database: rt.database.location, shared_state: rt.shared.kind, mail: rt.mailer.kind }, listening.msg);
  bootstrap.announce(listening.fields.url);
  // The worker in-process: its jobs go through the in-memory queue (BullMQ with REDIS_URL).
  const worker = createWorker(rt);
  await worker.start();
  return {
    stop: async () => {
      await metrics?.stop();
      await worker.stop();
      await gateway.stop();
      await http.stop();
      await admin.stop();
      await portal.stop();
      await rt.close();
    },
  };
}
