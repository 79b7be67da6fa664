import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '@svc/http';
import type { AdminState } from '../../admin-state.ts';
import * as create from './create.ts';
import * as remove from './delete.ts';
import * as enrollToken from './enroll-token.ts';
import * as get from './get.ts';
import * as list from './list.ts';
import * as logs from './logs.ts';
import * as logsStream from './logs-stream.ts';
import * as restartXray from './restart-xray.ts';
import * as update from './update.ts';
import * as upgradeAgent from './upgrade-agent.ts';

/** Registers this resource's routes, one file per operation. */
export function register(app: OpenAPIHono<AppEnv>, state: AdminState): void {
  for (const r of [list, create, get, update, remove, enrollToken, restartXray, upgradeAgent, logs]) r.register(app);
  logsStream.register(app, state);
}
