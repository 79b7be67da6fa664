import { startTestServer, type TestServer, type TestServerOptions } from '@svc/testkit';
import { mountAdminApi } from '../src/app.ts';

/** The admin surface alone on an ephemeral port over the test database. */
export const startAdminApi = (opts: Omit<TestServerOptions, 'mount'> = {}): Promise<TestServer> =>
  startTestServer({ ...opts, mount: mountAdminApi });
