import { createAdminApi } from '@svc/admin-api';
import type { Config } from '@svc/config';
import { startGateway } from '@svc/control-plane';
import { createHttpService } from '@svc/http';
import { createPortalApi } from '@svc/portal-api';
import { createRuntime, prepareBootstrap, startMaintenance, warnUnimplementedOAuth } from '@svc/runtime';

/**
 * All-in-one: every HTTP surface in one process on one port, over PGlite (or DATABASE_URL) and
 * in-process adapters (or REDIS_URL), plus the agent gateway on its gRPC port: the admin API,
 * the customer surface (GET /sub/{token}) and, later, the worker.
 */
export async function startAllInOne(config: Config): Promise<{ stop(): Promise<void> }> {
  const rt = await createRuntime(config);
  warnUnimplementedOAuth(rt);
  const bootstrap = await prepareBootstrap(rt);
  const http = createHttpService(rt.deps, (root) => {
    root.route('/', createAdminApi());
    root.route('/', createPortalApi());
  });
  const { url } = await http.start();
  // The agent gateway on its own TLS port (gRPC cannot share the HTTP/1.1 listener).
  const gateway = await startGateway(rt).catch(async (err) => {
    await http.stop();
    await rt.close();
    throw err;
  });
  rt.log.info({ url, database: rt.database.location, shared_state: rt.shared.kind }, `listening on ${url}`);
  bootstrap.announce(url);
  const stopMaintenance = startMaintenance(rt);
  return {
    stop: async () => {
      stopMaintenance();
      await gateway.stop();
      await http.stop();
      await rt.close();
    },
  };
}
