import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { createMemberCache, createSliceCache, DEFAULT_MEMBER_CACHE, DEFAULT_SLICE_CACHE } from '@svc/desired-state';
import {
  createSlots,
  type DomainDeps,
  desiredRevisionOf,
  ensureCertificateAuthority,
  gatewayTlsResumption,
  issueServerCertificate,
  newId,
} from '@svc/domain';
import { ControlPlaneWireDefinition } from '@svc/proto';
import { type AdmissionLimits, AdmissionLine } from './admission-line.ts';
import { appliedRevisionWriter, statusReportWriter } from './applied-revisions.ts';
import { createCachedGzip } from './cached-gzip.ts';
import { compiledSource, type SnapshotSource } from './desired-state-source.ts';
import { engineAdopter } from './engine-adoptions.ts';
import { fileSeal } from './file-seal.ts';
import { type GatewayOptions, gatewayOptions } from './gateway-options.ts';
import { createGatewayGrpcServer, type GatewayGrpcServer } from './grpc-server.ts';
import { createGzipPieceStore } from './gzip-piece-store.ts';
import { identityInterceptor } from './identity-interceptor.ts';
import { guardedDefinition, receiveLimits } from './inbound-guard.ts';
import { keptSource } from './kept-source.ts';
import { createLastPushStore, type LastPushStore } from './last-push-store.ts';
import { preEncodedSends } from './pre-encoded.ts';
import { sentMetrics } from './sent-metrics.ts';
import { controlPlaneService } from './service.ts';
import { streamOpener } from './stream-openings.ts';
import { type RegistryTiming, StreamRegistry } from './stream-registry.ts';
import { GatewayServerCredentials } from './tls-credentials.ts';
import { createUsageFolder } from './usage-folder.ts';

/**
 * What createControlPlane takes besides the configuration's grpc.* (read once, gatewayOptions):
 * any option to override (tests, benchmarks), and where snapshots come from.
 */
export type ControlPlaneOptions = Partial<Omit<GatewayOptions, 'timing' | 'admission'>> & {
  timing?: Partial<RegistryTiming>;
  admission?: Partial<AdmissionLimits>;
  /** Where DesiredState snapshots come from (default: the desired-state compiler). */
  snapshots?: SnapshotSource;
};

export interface ControlPlane {
  readonly replicaId: string;
  /** Streams held by this replica. */
  readonly streams: number;
  /** `addresses`: what the port is bound to, one per address the host names. */
  start(): Promise<{ port: number; caCertPem: string; addresses: string[] }>;
  /** Re-issues the server certificate when it is within 30 days of expiry (run daily); true when it did. */
  renewServerCertificate(force?: boolean): Promise<boolean>;
  stop(): Promise<void>;
}

const RENEW_BEFORE_MS = 30 * 86_400_000;
const RENEW_CHECK_MS = 12 * 3600_000;

/** The agent gateway: one TLS port, Enroll without and Sync with a client certificate. */
export function createControlPlane(deps: DomainDeps, overrides: ControlPlaneOptions = {}): ControlPlane {
  const configured = gatewayOptions(deps.config.grpc);
  const o: GatewayOptions = {
    ...configured,
    ...overrides,
    timing: { ...configured.timing, ...overrides.timing },
    admission: { ...configured.admission, ...overrides.admission },
  };
  const replicaId = newId('gw');
  const registry = new StreamRegistry(deps, replicaId, o.timing);
  let server: GatewayGrpcServer | undefined;
  let credentials: GatewayServerCredentials | undefined;
  let ca: Awaited<ReturnType<typeof ensureCertificateAuthority>> | undefined;
  let serverNotAfter = 0;
  let renewTimer: NodeJS.Timeout | undefined;
  let statsTimer: NodeJS.Timeout | undefined;
  let lastPushes: LastPushStore | undefined;
  const admission = new AdmissionLine(o.admission);
  const usageFolder = createUsageFolder(deps, o.usageFold);
  const issue = async () => {
    const identity = await issueServerCertificate(ca as NonNullable<typeof ca>, o.tlsHosts, deps.clock.now());
    serverNotAfter = Date.parse(new X509Certificate(identity.certPem).validTo);
    // The chain carries the CA after the leaf: an agent holding only the CA's SHA-256 (the
    // enroll-token answer's ca_cert_sha256, `svc-agent enroll --ca-sha256`) finds the CA in the
    // handshake, checks the pin and the leaf's signature, and sends nothing before that.
    // (OpenSSL would also complete the chain from the CA given to the TLS layer; sent
    // explicitly, it does not depend on that.)
    const chain = `${identity.certPem.trimEnd()}\n${(ca as NonNullable<typeof ca>).certPem.trimEnd()}\n`;
    return { certificate: Buffer.from(chain), privateKey: Buffer.from(identity.keyPem) };
  };
  return {
    replicaId,
    get streams() {
      return registry.size;
    },
    async start() {
      ca = await ensureCertificateAuthority(deps);
      credentials = new GatewayServerCredentials(
        Buffer.from(ca.certPem),
        await issue(),
        gatewayTlsResumption(deps.secrets, o.tlsSessionLifetimeSeconds),
      );
      // What the gateway keeps on disk is sealed under a key derived from the installation key (file-seal.ts).
      const seal = fileSeal(deps.secrets.derive('agent gateway files on disk v1', 32));
      const gzip = createCachedGzip({
        cacheBytes: o.gzipCacheBytes,
        store:
          o.gzipDiskBytes > 0
            ? createGzipPieceStore({
                dir: join(deps.config.data_dir, 'gzip-pieces'),
                maxBytes: o.gzipDiskBytes,
                seal,
                warn: (err, msg) => deps.log.warn({ err }, msg),
              })
            : undefined,
      });
      // A big node's last push, sent again as it was while its revision stands (kept-source.ts).
      const kept = createLastPushStore({
        dir: join(deps.config.data_dir, 'last-push'),
        maxBytes: o.lastPushDiskBytes,
        quietMs: o.lastPushQuietMs,
        seal,
        warn: (err, msg) => deps.log.warn({ err }, msg),
      });
      lastPushes = kept;
      const sent = sentMetrics(deps.metrics);
      // Big nodes' DesiredStates encoded before the send, and their gzip kept with them (pre-encoded.ts).
      const pre = preEncodedSends();
      const syncMaxBytes = o.maxReceiveMessageBytes;
      const serverOptions = {
        interceptors: [identityInterceptor(ca, () => deps.clock.now(), ControlPlaneWireDefinition.sync.path)],
        'grpc.max_send_message_length': o.maxSendMessageBytes,
        // Per method, checked on each message's length prefix before it is buffered
        // (patches/@grpc__grpc-js@1.14.3.patch): Enroll, open to anyone, takes a CSR and no more.
        'grpc.max_receive_message_length': syncMaxBytes,
        'grpc-node.max_receive_message_length_by_method': receiveLimits(ControlPlaneWireDefinition, syncMaxBytes, o.maxEnrollMessageBytes),
        // gzip of what the gateway sends: grpc-js 1.14.3's server never compresses responses,
        // so patches/@grpc__grpc-js@1.14.3.patch adds it (to agents that accept gzip, messages
        // of at least 1 KiB, compressed off the event loop). Agents may compress what they send.
        ...(o.gzipLevel > 0
          ? {
              'grpc.default_compression_algorithm': 2,
              'grpc-node.response_compression_level': o.gzipLevel,
              'grpc-node.response_compression_min_bytes': o.gzipMinBytes,
              // Big snapshots are gzip'd in content-defined pieces on several threads, the
              // pieces kept for the next push (one gzip member; cached-gzip.ts).
              'grpc-node.response_compressor': sent.compressor(pre.compressor(gzip.compress)),
            }
          : {}),
        // Find dead peers (a node that lost power keeps no TCP session alive).
        'grpc.keepalive_time_ms': 30_000,
        'grpc.keepalive_timeout_ms': 10_000,
        'grpc.http2.min_ping_interval_without_data_ms': 10_000,
        'grpc.keepalive_permit_without_calls': 1,
        // No channelz (nothing here serves it): grpc-js otherwise keeps a trace and counters
        // for every session and call, work done per reconnect in a storm (issue 17.3).
        'grpc.enable_channelz': 0,
      };
      server = createGatewayGrpcServer(
        serverOptions,
        sent.definition(pre.definition(guardedDefinition(ControlPlaneWireDefinition))),
        controlPlaneService(deps, ca, {
          deps,
          ca,
          registry,
          snapshots: keptSource(
            overrides.snapshots ??
              compiledSource(
                o.memberCacheRows > 0
                  ? {
                      ...deps,
                      members: createMemberCache({ ...DEFAULT_MEMBER_CACHE, maxRows: o.memberCacheRows }),
                      // A slice per member of a big node: the same bound.
                      slices: createSliceCache({ ...DEFAULT_SLICE_CACHE, maxRows: o.memberCacheRows }),
                    }
                  : deps,
              ),
            kept,
            {
              nowMs: () => deps.clock.now().getTime(),
              desiredRevision: (nodeId) => desiredRevisionOf(deps.db, nodeId),
              counted: (source) => deps.metrics.bigDesiredStates.inc({ source }),
            },
          ),
          idleTimeoutMs: o.idleTimeoutMs,
          usageSlots: createSlots(o.usageIngestConcurrency),
          usageFolder,
          recordApplied: appliedRevisionWriter(deps),
          recordStatus: statusReportWriter(deps),
          admission,
          adoptEngine: engineAdopter(deps),
          openStream: streamOpener(deps),
          ...(o.helloTimeoutMs ? { helloTimeoutMs: o.helloTimeoutMs } : {}),
        }),
      );
      await registry.start();
      usageFolder.start();
      // Our own listener (grpc-server.ts): a backlog that holds a reconnecting fleet's SYNs.
      const port = await server.listen(o.host, o.port, credentials, o.listenBacklog);
      renewTimer = setInterval(
        () => void this.renewServerCertificate().catch((err) => deps.log.error({ err }, 'gateway certificate not renewed')),
        RENEW_CHECK_MS,
      );
      renewTimer.unref();
      // While agents wait in line (a reconnecting fleet), what the line did, every 5 s.
      statsTimer = setInterval(() => {
        const st = admission.takeStats();
        if (st.waiting > 0 || st.turnedAway > 0 || st.longestWaitMs >= 1000)
          deps.log.info(
            {
              admitted: st.admitted,
              waiting: st.waiting,
              turned_away: st.turnedAway,
              replaced: st.replaced,
              longest_wait_ms: Math.round(st.longestWaitMs),
            },
            'admission line',
          );
      }, 5000);
      statsTimer.unref();
      return { port, caCertPem: ca.certPem, addresses: server.addresses() };
    },
    async renewServerCertificate(force = false) {
      if (!credentials) return false;
      if (!force && serverNotAfter - deps.clock.now().getTime() > RENEW_BEFORE_MS) return false;
      credentials.setIdentity(await issue());
      deps.log.info({ not_after: new Date(serverNotAfter).toISOString() }, 'gateway server certificate renewed');
      return true;
    },
    async stop() {
      clearInterval(renewTimer);
      clearInterval(statsTimer);
      admission.close();
      await registry.stop();
      await usageFolder.stop();
      // The last pushes under way are finished: the next process starts from them.
      await lastPushes?.flush();
      if (!server) return;
      const s = server;
      // Streams were ended above; give their statuses a moment to leave, then close hard.
      await Promise.race([s.shutdown(), new Promise((r) => setTimeout(r, 2000))]);
      s.forceShutdown();
    },
  };
}
