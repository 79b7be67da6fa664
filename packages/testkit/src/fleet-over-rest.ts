import { selfSignedCertificate } from './certificates.ts';
import { uniqueName } from './fixtures/names.ts';
import type { ApiClient, ApiResponse } from './http-client.ts';

/**
 * A fleet made the way an operator makes one, through the admin REST API only (no domain
 * calls, no SQL): a node, an uploaded certificate, inbound profiles and inbounds for the
 * protocol/transport pairs the end-to-end tests carry traffic over, an access group granting
 * them, a client with a subscription on the group, and the node's enrollment token. Every
 * helper throws with the answer's body when the API refuses.
 *
 * `api` must send an owner's or admin's token with each call (see startControlPlane's `api`).
 */

/** The pairs an engine and a share-link app both speak, one inbound each. */
export const FLEET_PROTOCOLS = ['vmess-tcp', 'vmess-ws', 'vless-tcp', 'trojan-tls', 'shadowsocks'] as const;
export type FleetProtocol = (typeof FLEET_PROTOCOLS)[number];

/** The path of the VMess WebSocket profile. */
export const FLEET_WS_PATH = '/ws';
/** The name the uploaded certificate is for, and the SNI the Trojan profile's links carry. */
export const FLEET_TLS_NAME = 'localhost';

type Api = Pick<ApiClient, 'get' | 'post'>;

async function expectStatus<T = any>(status: number, what: string, call: Promise<ApiResponse<T>>): Promise<T> {
  const res = await call;
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text}`);
  return res.body;
}

export interface NodeAnswer {
  id: string;
  name: string;
  address: string;
}

/** POST /nodes: a node clients reach at `address` (default 127.0.0.1). */
export const createNode = (api: Api, input: { name?: string; address?: string } = {}): Promise<NodeAnswer> =>
  expectStatus(
    201,
    'POST /api/v1/nodes',
    api.post('/api/v1/nodes', { name: input.name ?? uniqueName('e2e-node'), address: input.address ?? '127.0.0.1' }),
  );

/** POST /certificates: a self-signed certificate for `cn` (default localhost) uploaded with its key (returned too, for a test's own server). */
export async function uploadCertificate(api: Api, cn = FLEET_TLS_NAME): Promise<{ id: string; cert_pem: string; key_pem: string }> {
  const material = selfSignedCertificate({ cn });
  const created = await expectStatus<{ id: string }>(
    201,
    'POST /api/v1/certificates',
    api.post('/api/v1/certificates', { kind: 'uploaded', name: uniqueName('e2e-cert'), ...material }),
  );
  return { id: created.id, ...material };
}

export interface ProfileOptions {
  /** Required for trojan-tls: an uploaded certificate's id. */
  certificateId?: string;
  /** shadowsocks only; default aes-128-gcm (one an engine of v2ray 4 also runs). */
  shadowsocksMethod?: 'aes-128-gcm' | 'aes-256-gcm' | 'chacha20-ietf-poly1305';
}

/**
 * The body of POST /inbound-profiles for a pair: VLESS without flow, Trojan over tcp+tls with SNI
 * localhost, everything else the defaults (sniffing http, tls and quic: the gateway leaves out
 * what the node's engine does not know, so the end-to-end tests run the defaults on v2ray 4).
 */
export function profileBody(protocol: FleetProtocol, opts: ProfileOptions = {}): Record<string, unknown> {
  const name = uniqueName(`e2e-${protocol}`);
  const tcp = { network: 'tcp', security: 'none' };
  switch (protocol) {
    case 'vmess-tcp':
      return { name, protocol: 'vmess', stream: tcp };
    case 'vmess-ws':
      return { name, protocol: 'vmess', stream: { network: 'ws', security: 'none', ws: { path: FLEET_WS_PATH } } };
    case 'vless-tcp':
      return { name, protocol: 'vless', stream: tcp, vless_flow: null };
    case 'trojan-tls':
      if (!opts.certificateId) throw new Error('trojan-tls needs a certificateId (uploadCertificate)');
      return {
        name,
        protocol: 'trojan',
        stream: { network: 'tcp', security: 'tls', tls: { certificate_id: opts.certificateId, server_names: [FLEET_TLS_NAME] } },
      };
    case 'shadowsocks':
      return { name, protocol: 'shadowsocks', stream: tcp, shadowsocks_method: opts.shadowsocksMethod ?? 'aes-128-gcm' };
  }
}

/** POST /inbound-profiles for one pair. */
export const createInboundProfile = (api: Api, protocol: FleetProtocol, opts: ProfileOptions = {}): Promise<{ id: string }> =>
  expectStatus(201, `POST /api/v1/inbound-profiles (${protocol})`, api.post('/api/v1/inbound-profiles', profileBody(protocol, opts)));

/** POST /inbounds: the profile on the node's `port` (listening on every address). */
export const createInbound = (api: Api, input: { nodeId: string; profileId: string; port: number }): Promise<{ id: string; tag: string }> =>
  expectStatus(
    201,
    `POST /api/v1/inbounds (port ${input.port})`,
    api.post('/api/v1/inbounds', { node_id: input.nodeId, profile_id: input.profileId, port: input.port }),
  );

/** POST /access-groups granting the inbounds. */
export const createAccessGroup = (api: Api, inboundIds: string[]): Promise<{ id: string }> =>
  expectStatus(
    201,
    'POST /api/v1/access-groups',
    api.post('/api/v1/access-groups', { name: uniqueName('e2e-group'), inbound_ids: inboundIds }),
  );

/** POST /clients: an active client (an admin-made client needs no approval). */
export const createClient = (api: Api, email = `${uniqueName('e2e-client')}@example.com`): Promise<{ id: string; email: string }> =>
  expectStatus(201, 'POST /api/v1/clients', api.post('/api/v1/clients', { email }));

export interface SubscriptionAnswer {
  id: string;
  status: string;
  /** `{public base url}/sub/{token}`. */
  link: string;
  used_bytes: number;
  traffic_limit_bytes: number | null;
  expires_at: string | null;
}

/**
 * POST /subscriptions. Only the client and the groups are required; no plan is involved. It is
 * served (status active) while unlimited or under its limit and not expired: the defaults are
 * unlimited and never expiring.
 */
export const createSubscription = (
  api: Api,
  input: { clientId: string; accessGroupIds: string[]; trafficLimitBytes?: number | null; expiresAt?: string | null },
): Promise<SubscriptionAnswer> =>
  expectStatus(
    201,
    'POST /api/v1/subscriptions',
    api.post('/api/v1/subscriptions', {
      client_id: input.clientId,
      access_group_ids: input.accessGroupIds,
      ...(input.trafficLimitBytes !== undefined ? { traffic_limit_bytes: input.trafficLimitBytes } : {}),
      ...(input.expiresAt !== undefined ? { expires_at: input.expiresAt } : {}),
    }),
  );

export interface EnrollTokenAnswer {
  token: string;
  expires_at: string;
  node_id: string;
  /** host:port of the gateway (startControlPlane's grpcEndpoint). */
  grpc_endpoint: string;
  ca_cert_pem: string;
  ca_cert_sha256: string;
  /** The one line that installs the agent on a server (`curl -fsSL …/agent/install.sh | sh -s -- …`). */
  install_command: string;
}

/** POST /nodes/{id}/enroll-token: a new one-time token (the previous one stops working). */
export const issueEnrollToken = (api: Api, nodeId: string): Promise<EnrollTokenAnswer> =>
  expectStatus(201, 'POST /api/v1/nodes/{id}/enroll-token', api.post(`/api/v1/nodes/${nodeId}/enroll-token`));

export interface SubscriptionUsage {
  status: string;
  /** This period's total (what the traffic limit is checked against). */
  used_bytes: number;
  /** Sums over the hourly series of the last day (GET /subscriptions/{id}/usage). */
  uplink_bytes: number;
  downlink_bytes: number;
}

/** What the control plane has credited to a subscription so far. */
export async function subscriptionUsage(api: Api, subscriptionId: string): Promise<SubscriptionUsage> {
  const sub = await expectStatus<SubscriptionAnswer>(
    200,
    'GET /api/v1/subscriptions/{id}',
    api.get(`/api/v1/subscriptions/${subscriptionId}`),
  );
  const series = await expectStatus<{ items: { uplink_bytes: number; downlink_bytes: number }[] }>(
    200,
    'GET /api/v1/subscriptions/{id}/usage',
    api.get(`/api/v1/subscriptions/${subscriptionId}/usage?granularity=hour`),
  );
  const sum = (k: 'uplink_bytes' | 'downlink_bytes') => series.items.reduce((n, i) => n + i[k], 0);
  return { status: sub.status, used_bytes: sub.used_bytes, uplink_bytes: sum('uplink_bytes'), downlink_bytes: sum('downlink_bytes') };
}

export interface Fleet {
  node: NodeAnswer;
  certificate: { id: string; cert_pem: string; key_pem: string } | null;
  /** Per pair: its profile, its inbound and the port it listens on. */
  inbounds: Partial<Record<FleetProtocol, { profileId: string; inboundId: string; tag: string; port: number }>>;
  accessGroupId: string;
  clientId: string;
  subscription: SubscriptionAnswer;
  /** The subscription's link (GET it as an app does). */
  subscriptionUrl: string;
  /** The token part of the link. */
  subscriptionToken: string;
  enroll: EnrollTokenAnswer;
}

/**
 * One node with an inbound per pair in `ports` (each listening on the given port), granted to
 * one subscription of a new client, and the node's enrollment token. The certificate is
 * uploaded only when trojan-tls is asked for.
 */
export async function createFleetForProtocols(
  api: Api,
  opts: { node?: { name?: string; address?: string }; ports: Partial<Record<FleetProtocol, number>> },
): Promise<Fleet> {
  const node = await createNode(api, opts.node);
  const pairs = FLEET_PROTOCOLS.filter((p) => opts.ports[p] !== undefined);
  const certificate = pairs.includes('trojan-tls') ? await uploadCertificate(api) : null;
  const inbounds: Fleet['inbounds'] = {};
  for (const protocol of pairs) {
    const port = opts.ports[protocol] as number;
    const profile = await createInboundProfile(api, protocol, certificate ? { certificateId: certificate.id } : {});
    const inbound = await createInbound(api, { nodeId: node.id, profileId: profile.id, port });
    inbounds[protocol] = { profileId: profile.id, inboundId: inbound.id, tag: inbound.tag, port };
  }
  const group = await createAccessGroup(
    api,
    Object.values(inbounds).map((i) => i.inboundId),
  );
  const client = await createClient(api);
  const subscription = await createSubscription(api, { clientId: client.id, accessGroupIds: [group.id] });
  const enroll = await issueEnrollToken(api, node.id);
  return {
    node,
    certificate,
    inbounds,
    accessGroupId: group.id,
    clientId: client.id,
    subscription,
    subscriptionUrl: subscription.link,
    subscriptionToken: subscription.link.slice(subscription.link.lastIndexOf('/') + 1),
    enroll,
  };
}

/** The User-Agent of the share-link app the tests stand in for (served the base64 list). */
export const SHARE_LINK_APP_UA = 'v2rayNG/1.8.5';

/** GET the subscription link as a share-link app does; throws unless 200. */
export async function fetchSubscription(url: string, userAgent = SHARE_LINK_APP_UA): Promise<{ body: string; headers: Headers }> {
  const res = await fetch(url, { headers: { 'user-agent': userAgent } });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${body}`);
  return { body, headers: res.headers };
}
