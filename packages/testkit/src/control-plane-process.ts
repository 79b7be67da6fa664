import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, migratedDataDir, type TestDatabase, testDatabaseUrl } from './database.ts';
import { freePort } from './engine-process.ts';
import { type ApiClient, type ApiResponse, createApiClient, type RequestOptions } from './http-client.ts';
import { type AppProcess, spawnApp } from './processes.ts';

/**
 * The whole system as an operator runs it, for end-to-end tests: `svc start` (apps/cli) as a
 * child process on its own data directory and fixed ports, set up through POST /api/v1/setup
 * with the token from its log, with an owner signed in. The ports are chosen before the first
 * start (not port 0) because enrollment tokens name the gateway's port and a restart must come
 * back where the agents dial. In PostgreSQL mode (the runner has DATABASE_URL) the child gets a
 * schema of its own; it never gets REDIS_URL: all-in-one keeps shared state in process.
 */

const ENTRY = 'apps/cli/src/main.ts';
const OWNER = { email: 'e2e-owner@example.com', password: 'e2e-owner-password-1' };
const START_TIMEOUT_MS = 60_000;

export interface ControlPlaneOptions {
  /** Extra environment for the child (SVC_* settings), applied over the defaults below. */
  env?: Record<string, string>;
  /** The owner created at setup. */
  owner?: { email: string; password: string };
  /**
   * Leave the installation in bootstrap mode (no setup): a test that sets it up another way (the
   * admin panel's setup screen) reads `setupToken`; `api` signs in as `owner` once that is done.
   */
  skipSetup?: boolean;
  /**
   * The HTTP port, when the test must know the address before the start (an OpenID provider
   * registered with the callback URL); default: a free one.
   */
  httpPort?: number;
}

/** An admin API client that sends the owner's token with every call and signs in again on a 401 (expiry, restart). */
export type OwnerApi = ApiClient & { token(): Promise<string> };

export interface ControlPlane {
  /** Base URL of every HTTP surface, e.g. http://127.0.0.1:41234. */
  http: string;
  /** Where agents dial the gateway (TLS): `127.0.0.1:<port>`, as enrollment tokens name it. */
  grpcEndpoint: string;
  httpPort: number;
  grpcPort: number;
  dataDir: string;
  /** What the child runs with (beside the operator environment). */
  env: Record<string, string>;
  api: OwnerApi;
  /** The setup token the first start logged. */
  setupToken: string;
  /** The running child (a new one after restart()). */
  readonly process: AppProcess;
  /** SIGKILL, no clean-up: the data directory keeps whatever the kill left. */
  kill9(): Promise<void>;
  /** Stops the child if it still runs (SIGTERM), starts it again on the same data and ports, resolves once it answers. */
  restart(): Promise<void>;
  /** Stops the child and removes its data directory (and its PostgreSQL schema). */
  stop(): Promise<void>;
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const owner = opts.owner ?? OWNER;
  // On the embedded default the data directory starts migrated (a copy: migratedDataDir), as after a first start.
  const dataDir = testDatabaseUrl() ? await mkdtemp(join(tmpdir(), 'svc-e2e-cp-')) : await migratedDataDir('svc-e2e-cp-');
  let database: TestDatabase | undefined;
  let child: AppProcess | undefined;
  const cleanUp = async () => {
    await child?.stop();
    await database?.destroy();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    database = testDatabaseUrl() ? await createTestDatabase() : undefined;
    const [httpPort, grpcPort] = [opts.httpPort ?? (await freePort()), await freePort()];
    const http = `http://127.0.0.1:${httpPort}`;
    const grpcEndpoint = `127.0.0.1:${grpcPort}`;
    const env: Record<string, string> = {
      SVC_DATA_DIR: dataDir,
      SVC_INSTALLATION_KEY: randomBytes(32).toString('base64'),
      SVC_HTTP_HOST: '127.0.0.1',
      SVC_HTTP_PORT: String(httpPort),
      SVC_PUBLIC_BASE_URL: http,
      SVC_GRPC_HOST: '127.0.0.1',
      SVC_GRPC_PORT: String(grpcPort),
      SVC_GRPC_PUBLIC_ENDPOINT: grpcEndpoint,
      SVC_LOG_LEVEL: 'info',
      // A test reads a link right after changing what it serves.
      SVC_SUB_CACHE_SECONDS: '0',
      // Webhook receivers and provider stand-ins listen on 127.0.0.1 (test-server.ts says why).
      SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      ...(database?.url ? { DATABASE_URL: database.url } : {}),
      ...opts.env,
    };

    const boot = async (): Promise<AppProcess> => {
      const app = spawnApp(ENTRY, env, ['start']);
      child = app;
      await app.waitForLog(/^listening on /, START_TIMEOUT_MS);
      return app;
    };

    const first = await boot();
    const tokenLine = JSON.parse(await first.waitForLine((l) => l.includes('"setup_token"'), 'the setup_token line', START_TIMEOUT_MS));
    const api = ownerApi(http, owner);
    if (!opts.skipSetup) {
      const anonymous = createApiClient(http);
      const setup = await anonymous.post('/api/v1/setup', { token: tokenLine.setup_token, ...owner });
      if (setup.status !== 201) throw new Error(`POST /api/v1/setup: ${setup.status} ${setup.text}`);
      await api.token();
    }

    return {
      http,
      grpcEndpoint,
      httpPort,
      grpcPort,
      dataDir,
      env,
      api,
      setupToken: tokenLine.setup_token as string,
      get process() {
        return child as AppProcess;
      },
      kill9: () => (child as AppProcess).kill(),
      async restart() {
        await child?.stop();
        await boot();
        // Ready means answering: the listening line comes before the worker has started.
        const me = await api.get('/api/v1/auth/me');
        if (me.status !== 200) throw new Error(`after restart, GET /api/v1/auth/me: ${me.status} ${me.text}`);
      },
      stop: cleanUp,
    };
  } catch (err) {
    await cleanUp().catch(() => {});
    throw err;
  }
}

/** Signs in once and again whenever a call comes back 401; a token passed in opts wins. */
function ownerApi(baseUrl: string, owner: { email: string; password: string }): OwnerApi {
  const raw = createApiClient(baseUrl);
  let current: string | undefined;
  const login = async () => {
    const res = await raw.post('/api/v1/auth/login', owner);
    if (res.status !== 200) throw new Error(`POST /api/v1/auth/login: ${res.status} ${res.text}`);
    current = res.body.access_token as string;
    return current;
  };
  const token = async () => current ?? login();
  async function call<T = any>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    if (opts.token) return raw.call<T>(method, path, body, opts);
    const res = await raw.call<T>(method, path, body, { ...opts, token: await token() });
    if (res.status !== 401) return res;
    return raw.call<T>(method, path, body, { ...opts, token: await login() });
  }
  return {
    baseUrl,
    call,
    token,
    get: <T = any>(path: string, opts?: RequestOptions) => call<T>('GET', path, undefined, opts),
    post: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('POST', path, body, opts),
    patch: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('PATCH', path, body, opts),
    put: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('PUT', path, body, opts),
    delete: <T = any>(path: string, opts?: RequestOptions) => call<T>('DELETE', path, undefined, opts),
  };
}
