import { X509Certificate } from 'node:crypto';
import { createMemberCache, DEFAULT_MEMBER_CACHE } from '@svc/desired-state';
import { createSlots, type DomainDeps, ensureCertificateAuthority, gatewayTlsResumption, issueServerCertificate, newId } from '@svc/domain';
import { ControlPlaneWireDefinition } from '@svc/proto';
import { type AdmissionLimits, AdmissionLine } from './admission-line.ts';
import { appliedRevisionWriter, statusReportWriter } from './applied-revisions.ts';
import { createCachedGzip } from './cached-gzip.ts';
import { compiledSource, type SnapshotSource } from './desired-state-source.ts';
import { engineAdopter } from './engine-adoptions.ts';
import { createGatewayGrpcServer, type GatewayGrpcServer } from './grpc-server.ts';
import { identityInterceptor } from './identity-interceptor.ts';
import { guardedDefinition, receiveLimits } from './inbound-guard.ts';
import { sentMetrics } from './sent-metrics.ts';
import { controlPlaneService } from './service.ts';
import { streamOpener } from './stream-openings.ts';
import { DEFAULT_TIMING, type RegistryTiming, StreamRegistry } from './stream-registry.ts';
import { GatewayServerCredentials } from './tls-credentials.ts';

export interface ControlPlaneOptions {
  host: string;
  port: number;
  /** Names and addresses agents dial; they go into the server certificate. */
  tlsHosts: readonly string[];
  /** Largest message sent (a big node's DesiredState). */
  maxSendMessageBytes?: number;
  /** Largest message accepted on an authenticated Sync (a usage report; inbound-guard.ts). */
  maxReceiveMessageBytes?: number;
  /** Largest Enroll message (no client certificate): ENROLL_MAX_BYTES; other values only to measure (bench). */
  maxEnrollMessageBytes?: number;
  /** A stream without any message for this long is ended (status arrives every 30 s). */
  idleTimeoutMs?: number;
  helloTimeoutMs?: number;
  timing?: Partial<RegistryTiming>;
  /** Where DesiredState snapshots come from (the desired-state compiler). */
  snapshots?: SnapshotSource;
  /** gzip level of sent messages, 0 = off (default: config grpc.gzip_level). */
  gzipLevel?: number;
  /** TLS session ticket lifetime, 0 = no resumption (default: config grpc.tls_session_lifetime_seconds). */
  tlsSessionLifetimeSeconds?: number;
  /** The admission line's limits (default: config grpc.admissions_per_second, admission_concurrency, admission_max_wait_seconds). */
  admission?: Partial<AdmissionLimits>;
  /** Listen backlog of the port (default: config grpc.listen_backlog; Linux caps it at net.core.somaxconn). */
  listenBacklog?: number;
}

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
export function createControlPlane(deps: DomainDeps, opts: ControlPlaneOptions): ControlPlane {
  const replicaId = newId('gw');
  const registry = new StreamRegistry(deps, replicaId, { ...DEFAULT_TIMING, ...opts.timing });
  let server: GatewayGrpcServer | undefined;
  let credentials: GatewayServerCredentials | undefined;
  let ca: Awaited<ReturnType<typeof ensureCertificateAuthority>> | undefined;
  let serverNotAfter = 0;
  let renewTimer: NodeJS.Timeout | undefined;
  let statsTimer: NodeJS.Timeout | undefined;
  const g = deps.config.grpc;
  const admission = new AdmissionLine({
    perSecond: opts.admission?.perSecond ?? g.admissions_per_second,
    concurrency: opts.admission?.concurrency ?? g.admission_concurrency,
    maxWaitMs: opts.admission?.maxWaitMs ?? g.admission_max_wait_seconds * 1000,
  });
  const issue = async () => {
    const identity = await issueServerCertificate(ca as NonNullable<typeof ca>, opts.tlsHosts, deps.clock.now());
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
        gatewayTlsResumption(deps.secrets, opts.tlsSessionLifetimeSeconds ?? deps.config.grpc.tls_session_lifetime_seconds),
      );
      const gzipLevel = opts.gzipLevel ?? deps.config.grpc.gzip_level;
      const gzip = createCachedGzip({ cacheBytes: deps.config.grpc.gzip_cache_mb * 1024 * 1024 });
      const sent = sentMetrics(deps.metrics);
      const syncMaxBytes = opts.maxReceiveMessageBytes ?? deps.config.grpc.max_receive_message_bytes;
      const serverOptions = {
        interceptors: [identityInterceptor(ca, () => deps.clock.now(), ControlPlaneWireDefinition.sync.path)],
        'grpc.max_send_message_length': opts.maxSendMessageBytes ?? 256 * 1024 * 1024,
        // Per method, checked on each message's length prefix before it is buffered
        // (patches/@grpc__grpc-js@1.14.3.patch): Enroll, open to anyone, takes a CSR and no more.
        'grpc.max_receive_message_length': syncMaxBytes,
        'grpc-node.max_receive_message_length_by_method': receiveLimits(
          ControlPlaneWireDefinition,
          syncMaxBytes,
          opts.maxEnrollMessageBytes,
        ),
        // gzip of what the gateway sends: grpc-js 1.14.3's server never compresses responses,
        // so patches/@grpc__grpc-js@1.14.3.patch adds it (to agents that accept gzip, messages
        // of at least 1 KiB, compressed off the event loop). Agents may compress what they send.
        ...(gzipLevel > 0
          ? {
              'grpc.default_compression_algorithm': 2,
              'grpc-node.response_compression_level': gzipLevel,
              'grpc-node.response_compression_min_bytes': deps.config.grpc.gzip_min_bytes,
              // Big snapshots are gzip'd in content-defined pieces on several threads, the
              // pieces kept for the next push (one gzip member; cached-gzip.ts).
              'grpc-node.response_compressor': sent.compressor(gzip.compress),
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
        sent.definition(guardedDefinition(ControlPlaneWireDefinition)),
        controlPlaneService(deps, ca, {
          deps,
          ca,
          registry,
          snapshots:
            opts.snapshots ??
            compiledSource(
              deps.config.grpc.member_cache_rows > 0
                ? { ...deps, members: createMemberCache({ ...DEFAULT_MEMBER_CACHE, maxRows: deps.config.grpc.member_cache_rows }) }
                : deps,
            ),
          idleTimeoutMs: opts.idleTimeoutMs ?? deps.config.grpc.idle_timeout_seconds * 1000,
          usageSlots: createSlots(deps.config.grpc.usage_ingest_concurrency),
          recordApplied: appliedRevisionWriter(deps),
          recordStatus: statusReportWriter(deps),
          admission,
          adoptEngine: engineAdopter(deps),
          openStream: streamOpener(deps),
          ...(opts.helloTimeoutMs ? { helloTimeoutMs: opts.helloTimeoutMs } : {}),
        }),
      );
      await registry.start();
      // Our own listener (grpc-server.ts): a backlog that holds a reconnecting fleet's SYNs.
      const port = await server.listen(opts.host, opts.port, credentials, opts.listenBacklog ?? g.listen_backlog);
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
      if (!server) return;
      const s = server;
      // Streams were ended above; give their statuses a moment to leave, then close hard.
      await Promise.race([s.shutdown(), new Promise((r) => setTimeout(r, 2000))]);
      s.forceShutdown();
    },
  };
}
