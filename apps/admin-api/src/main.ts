// The admin surface as its own deployable (split mode): `node --import tsx apps/admin-api/src/main.ts`.
import { loadConfig } from '@svc/config';
import { createHttpService } from '@svc/http';
import { createRuntime, listenLine, prepareBootstrap, runDeployable, startMetricsListener } from '@svc/runtime';
import { registerAgentFiles } from './agent-files.ts';
import { createAdminApi } from './app.ts';
import { registerAdminWeb } from './web.ts';

async function start() {
  const config = loadConfig(process.env);
  const rt = await createRuntime(config, { app: 'admin-api' });
  const metrics = await startMetricsListener(rt);
  const bootstrap = await prepareBootstrap(rt);
  const admin = createAdminApi();
  const http = createHttpService(rt.deps, (root) => {
    root.route('/', admin.routes);
    registerAdminWeb(root, rt.config);
    registerAgentFiles(root, rt.config);
  });
  const listening = listenLine(rt.config, await http.start(), 'admin-api');
  rt.log.info({ ...listening.fields, database: rt.database.location, shared_state: rt.shared.kind }, listening.msg);
  bootstrap.announce(listening.fields.url);
  return async () => {
    await metrics?.stop();
    await http.stop();
    await admin.stop();
    await rt.close();
  };
}

runDeployable('admin-api', start);
