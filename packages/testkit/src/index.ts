export { adminWithRole, login, OWNER, setupOwner } from './admins.ts';
export { appEntry } from './app-entry.ts';
export { caSignedCertificate, type SelfSignedCertificateOptions, selfSignedCertificate } from './certificates.ts';
export { type ControlPlane, type ControlPlaneOptions, type OwnerApi, startControlPlane } from './control-plane-process.ts';
export { createEmptyTestDatabase, createTestDatabase, migratedDataDir, type TestDatabase, testDatabaseUrl } from './database.ts';
export { createDomainTestbed, type DomainTestbed, TEST_OWNER } from './domain-testbed.ts';
export { type EngineProcess, freePort, portAccepts, type StartEngineOptions, startV2ray } from './engine-process.ts';
export { type EventStream, openEventStream, type SseEvent } from './event-stream.ts';
export { createFakeClock, type FakeClock } from './fake-clock.ts';
export { type Fixtures, fixtures, uniqueName } from './fixtures.ts';
// The single-resource makers (createNode, createClient...) under a namespace: their names are the domain's use cases'.
export * as fleetOverRest from './fleet-over-rest.ts';
export {
  createFleetForProtocols,
  type EnrollTokenAnswer,
  FLEET_PROTOCOLS,
  type Fleet,
  type FleetProtocol,
  fetchSubscription,
  issueEnrollToken,
  SHARE_LINK_APP_UA,
  type SubscriptionAnswer,
  type SubscriptionUsage,
  subscriptionUsage,
} from './fleet-over-rest.ts';
export { type ApiClient, type ApiResponse, cookiesOf, createApiClient, oversizedPost, pageAll } from './http-client.ts';
export {
  type EchoServer,
  httpGetThroughProxy,
  httpRequestThroughProxy,
  type ProxiedResponse,
  type ProxiedStream,
  startEchoServer,
  streamThroughProxy,
} from './http-through-proxy.ts';
export { cloneSubscriptions } from './many-subscriptions.ts';
export { testOutbound } from './outbound.ts';
export { MissingPeerError, peerMissing, requirePeer } from './peers.ts';
export {
  type PrivatePostgres,
  type PrivateRedis,
  privateServicesAvailable,
  type SqlClient,
  startPrivatePostgres,
  startPrivateRedis,
} from './private-services.ts';
export { type AppProcess, operatorEnv, REPO_ROOT, spawnApp } from './processes.ts';
export {
  type PayloadServer,
  type ProxiedRequestOptions,
  type ProxiedResponse as ProxiedPayloadResponse,
  requestThroughProxy,
  startPayloadServer,
} from './proxied-payload.ts';
export { createScratchDatabase, type ScratchDatabase } from './scratch-database.ts';
export { type V2rayClientOptions, v2rayClientFromLink } from './share-link-client.ts';
export { decodeSubscriptionBody, parseShareLink, type ShareLink, type ShareLinkProtocol } from './share-links.ts';
export { startTcpBalancer, type TcpBalancer } from './tcp-balancer.ts';
export { startTestServer, type TestServer, type TestServerOptions } from './test-server.ts';
export { until } from './until.ts';
export { usageFolded } from './usage-folded.ts';
export { type V2rayAvailability, v2rayAvailable, v2rayTest } from './v2ray.ts';
export { type V2rayClientRoute, v2rayClientConfig } from './v2ray-client-config.ts';
