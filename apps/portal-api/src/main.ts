// The customer surface as its own deployable (split mode): `node --import tsx apps/portal-api/src/main.ts`.
import { loadConfig } from '@svc/config';
import { createHttpService } from '@svc/http';
import { createRuntime, listenLine, runDeployable, startMetricsListener } from '@svc/runtime';
import { createPortalApi } from './app.ts';
import { registerPortalWeb } from './web.ts';

async function start() {
  const config = loadConfig(process.env);
  const rt = await createRuntime(config, { app: 'portal-api' });
  const metrics = await startMetricsListener(rt);
  const portal = createPortalApi();
  const http = createHttpService(
    rt.deps,
    (root) => {
      root.route('/', portal.routes);
      registerPortalWeb(root, rt.config);
    },
    { extraPorts: true },
  );
  const listening = listenLine(rt.config, await http.start(), 'portal-api');
  rt.log.info({ ...listening.fields, database: rt.database.location, shared_state: rt.shared.kind }, listening.msg);
  return async () => {
    await metrics?.stop();
    await http.stop();
    await portal.stop();
    await rt.close();
  };
}

runDeployable('portal-api', start);
