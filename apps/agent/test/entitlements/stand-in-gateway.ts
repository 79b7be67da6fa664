import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerCredentials } from '@grpc/grpc-js';
import {
  type AgentMessage,
  ControlPlaneDefinition,
  type Cutoff,
  type DesiredState,
  type ServerMessage,
  type StatusReport,
} from '@svc/proto';
import { createServer, type Server } from 'nice-grpc';

/**
 * The control plane as the agent meets it on the wire, played in the test: a Sync server over
 * mutual TLS (a CA, the gateway's certificate for 127.0.0.1 and the node's, made by openssl)
 * that sends ServerClock and the desired state when a stream opens, and records what the agent
 * sends: UsageReports and CutoffReports each taken exactly once by report id (a repeat is
 * acknowledged and changes nothing, as the control plane does), every status. `stop` is the
 * control plane gone (connections cut); `start` brings it back on the same port.
 */
export interface NodeIdentityFiles {
  nodeId: string;
  server: string;
  caCertPem: string;
  certPem: string;
  keyPem: string;
}

export interface StandInGateway {
  identity: NodeIdentityFiles;
  /** The desired state sent on every stream (and at once to the open one by setDesired). */
  setDesired(ds: DesiredState): void;
  /** Usage recorded once per report id: bytes per subscription. */
  usage: Map<string, bigint>;
  /** Cutoffs recorded once per report id. */
  cutoffs: Array<Cutoff & { reportId: bigint }>;
  /** CutoffReports received, repeats included. */
  cutoffReportsReceived: bigint[];
  statuses: StatusReport[];
  applied: bigint[];
  streams: number;
  /** CutoffAcks to leave unsent (lost on the way): the agent must send those reports again. */
  dropCutoffAcks: number;
  /** Called with each cutoff entry recorded (the control plane's re-grant). */
  onCutoff?: (c: Cutoff) => void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function makeCertificates(nodeId: string) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-stand-in-gw-'));
  try {
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Stand-in CA');
    for (const [name, cn, ext] of [
      ['server', 'gateway', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'],
      ['node', nodeId, 'extendedKeyUsage=clientAuth\n'],
    ] as const) {
      ssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
      writeFileSync(join(dir, `${name}.cnf`), ext);
      ssl(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '1',
        '-extfile',
        `${name}.cnf`,
        '-out',
        `${name}.pem`,
      );
    }
    const read = (f: string) => readFileSync(join(dir, f), 'utf8');
    // The agent keeps its key as PKCS#8 (identity.ts); openssl's EC key is already PKCS#8 ("PRIVATE KEY").
    return {
      ca: read('ca.pem'),
      serverCert: read('server.pem'),
      serverKey: read('server.key'),
      nodeCert: read('node.pem'),
      nodeKey: read('node.key'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function standInGateway(port: number, nodeId = 'node-entitlements'): StandInGateway {
  const certs = makeCertificates(nodeId);
  let desired: DesiredState | null = null;
  let server: Server | null = null;
  const open = new Set<(m: ServerMessage) => void>();
  const seenUsage = new Set<bigint>();
  const seenCutoffs = new Set<bigint>();

  const gw: StandInGateway = {
    identity: { nodeId, server: `127.0.0.1:${port}`, caCertPem: certs.ca, certPem: certs.nodeCert, keyPem: certs.nodeKey },
    usage: new Map(),
    cutoffs: [],
    cutoffReportsReceived: [],
    statuses: [],
    applied: [],
    streams: 0,
    dropCutoffAcks: 0,
    setDesired(ds) {
      desired = ds;
      for (const push of open) push({ desiredState: ds });
    },
    async start() {
      server = createServer();
      server.add(ControlPlaneDefinition, {
        enroll: async () => {
          throw new Error('not played');
        },
        async *sync(requests: AsyncIterable<AgentMessage>): AsyncGenerator<ServerMessage> {
          gw.streams++;
          const queue: ServerMessage[] = [];
          const waiting: { wake: (() => void) | null } = { wake: null };
          let ended = false;
          const push = (m: ServerMessage) => {
            queue.push(m);
            waiting.wake?.();
          };
          open.add(push);
          const reading = (async () => {
            try {
              for await (const m of requests) {
                if (m.hello) {
                  // What the node runs, as the control plane learns it (an ApplyResult may have had no stream to go on).
                  gw.applied.push(m.hello.appliedRevision);
                  push({ clock: { nowMs: BigInt(Date.now()) } });
                  if (desired && desired.revision > m.hello.appliedRevision) push({ desiredState: desired });
                } else if (m.applyResult?.success) gw.applied.push(m.applyResult.revision);
                else if (m.status) gw.statuses.push(m.status);
                else if (m.usage) {
                  if (!seenUsage.has(m.usage.reportId)) {
                    seenUsage.add(m.usage.reportId);
                    for (const e of m.usage.entries)
                      gw.usage.set(e.subscriptionId, (gw.usage.get(e.subscriptionId) ?? 0n) + e.uplinkBytes + e.downlinkBytes);
                  }
                  push({ usageAck: { reportId: m.usage.reportId } });
                } else if (m.cutoffs) {
                  gw.cutoffReportsReceived.push(m.cutoffs.reportId);
                  if (!seenCutoffs.has(m.cutoffs.reportId)) {
                    seenCutoffs.add(m.cutoffs.reportId);
                    for (const c of m.cutoffs.entries) {
                      gw.cutoffs.push({ ...c, reportId: m.cutoffs.reportId });
                      gw.onCutoff?.(c);
                    }
                  }
                  if (gw.dropCutoffAcks > 0) gw.dropCutoffAcks--;
                  else push({ cutoffAck: { reportId: m.cutoffs.reportId } });
                }
              }
            } catch {}
            ended = true;
            waiting.wake?.();
          })();
          try {
            while (!ended) {
              const m = queue.shift();
              if (m) yield m;
              else
                await new Promise<void>((r) => {
                  waiting.wake = r;
                });
            }
          } finally {
            open.delete(push);
            await reading;
          }
        },
      } as never);
      await server.listen(
        `127.0.0.1:${port}`,
        ServerCredentials.createSsl(
          Buffer.from(certs.ca),
          [{ private_key: Buffer.from(certs.serverKey), cert_chain: Buffer.from(certs.serverCert) }],
          true,
        ),
      );
    },
    async stop() {
      server?.forceShutdown();
      server = null;
      open.clear();
    },
  };
  return gw;
}
