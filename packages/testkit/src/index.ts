export { adminWithRole, login, OWNER, setupOwner } from './admins.ts';
export { type SelfSignedCertificateOptions, selfSignedCertificate } from './certificates.ts';
export { createTestDatabase, type TestDatabase, testDatabaseUrl } from './database.ts';
export { type EventStream, openEventStream, type SseEvent } from './event-stream.ts';
export { createFakeClock, type FakeClock } from './fake-clock.ts';
export { type ApiClient, type ApiResponse, createApiClient } from './http-client.ts';
export { type AppProcess, operatorEnv, REPO_ROOT, spawnApp } from './processes.ts';
export { startTestServer, type TestServer, type TestServerOptions } from './test-server.ts';
export { type V2rayAvailability, v2rayAvailable, v2rayTest } from './v2ray.ts';
