import {
  type AgentReply,
  type CutoffEntry,
  type DomainDeps,
  ingestCutoffReport,
  isDomainError,
  type LogLine,
  recordAgentUpgradeResult,
  recordApplyFailure,
  recordDeviceReport,
  renewAgentCertificate,
  replyTopic,
  stageUsageReport,
  type UsageStageResult,
} from '@svc/domain';
import { type AgentMessage, CutoffReason, deviceAddress, LogSource } from '@svc/proto';
import { ServerError } from 'nice-grpc';
import type { AgentSession } from './agent-session.ts';
import { toGrpcError } from './errors.ts';
import { describeFault, type InboundFault, textFault } from './inbound-guard.ts';
import type { SyncDeps } from './sync-stream.ts';

/**
 * What the gateway does with each kind of AgentMessage once the stream is open (sync-stream.ts
 * keeps the stream's lifecycle): one handler per kind, each decode -> call -> answer. `fault`
 * is what the decode step found (inbound-guard.ts): a refused CertRenewal is answered with
 * CertIssued.error and the stream stays open; log lines that break the text rule are left out
 * of their batch (Xray's lines can carry what a client sent; one must not cut a node off); a
 * bad ApplyResult, StatusReport or second Hello ends the stream with the fault's status naming
 * the field. UsageReport entries are never marked: the domain drops a bad entry and the report
 * is acknowledged.
 */
export interface MessageScope {
  s: SyncDeps;
  session: AgentSession;
  nodeId: string;
  ip: string | null;
}

type Of<K extends keyof AgentMessage> = NonNullable<AgentMessage[K]>;

/** svc_usage_*: what became of a report's entries at staging; the fold counts what it credits (usage-folder.ts). */
function countUsage(deps: DomainDeps, result: UsageStageResult, entries: number): void {
  const m = deps.metrics;
  if (!result.applied) {
    m.usageReports.inc({ result: 'replayed' });
    if (entries > 0) m.usageRefused.inc({ reason: 'replayed' }, entries);
    return;
  }
  m.usageReports.inc({ result: 'applied' });
  if (result.invalid > 0) m.usageRefused.inc({ reason: 'invalid' }, result.invalid);
}

const sourceName = (s: LogSource): LogLine['source'] => (s === LogSource.AGENT ? 'agent' : 'xray');

/** An ApplyResult: the applied revision written (a recovery logged), or the failure recorded and logged. */
async function onApplyResult(x: MessageScope, r: Of<'applyResult'>): Promise<void> {
  if (r.success) {
    x.session.applied(Number(r.revision));
    const recovered = await x.s.recordApplied(x.nodeId, Number(r.revision));
    if (recovered)
      x.s.deps.log.info(
        {
          node_id: recovered.node_id,
          node_name: recovered.name,
          revision: recovered.revision,
          failed_revision: recovered.failed_revision,
        },
        'node applied its desired state again',
      );
  } else {
    const failed = await recordApplyFailure(x.s.deps, x.nodeId, { revision: Number(r.revision), error: r.error });
    // Every failure is logged (a repeat after a reconnect too); node.apply_failed is raised once per revision.
    if (failed)
      x.s.deps.log.warn(
        {
          node_id: failed.node_id,
          node_name: failed.name,
          revision: failed.revision,
          applied_revision: failed.applied_revision,
          failing_since: failed.failing_since.toISOString(),
          repeat: !failed.first,
          error: failed.error,
        },
        'node failed to apply its desired state',
      );
  }
  x.s.deps.metrics.applyResults.inc({ result: r.success ? 'applied' : 'failed' });
}

/** A StatusReport, written (statusReportWriter gathers them). */
async function onStatus(x: MessageScope, st: Of<'status'>): Promise<void> {
  await x.s.recordStatus(x.nodeId, {
    xray_running: st.xrayRunning,
    cpu_percent: st.cpuPercent,
    memory_used_bytes: Number(st.memoryUsedBytes),
    memory_total_bytes: Number(st.memoryTotalBytes),
    disk_used_bytes: Number(st.diskUsedBytes),
    disk_total_bytes: Number(st.diskTotalBytes),
    connections: st.connections,
    xray_uptime_seconds: Number(st.xrayUptimeSeconds),
    // Issue 36: what the agent enforces; absent from an agent of an earlier release (stored as null).
    enforcement: st.enforcement
      ? {
          device_limits: st.enforcement.deviceLimits,
          speed_caps: st.enforcement.speedCaps,
          entitlements: st.enforcement.entitlements,
          speed_caps_error: st.enforcement.speedCapsError,
          device_limits_error: st.enforcement.deviceLimitsError,
          device_source: st.enforcement.deviceSource,
          shaped_devices: st.enforcement.shapedDevices,
        }
      : null,
  });
}

const cutoffReason = (r: CutoffReason): CutoffEntry['reason'] =>
  r === CutoffReason.CUTOFF_TIME ? 'time' : r === CutoffReason.CUTOFF_SLICE ? 'slice' : 'unknown';

/**
 * A CutoffReport (issue 36): recorded exactly once per report id (limits/cutoff-ingest.ts) and
 * acknowledged with CutoffAck, a replay too (the agent forgets it only then). Bad entries are
 * dropped by the domain, never refusing the report: the agent would send it again forever.
 */
async function onCutoffs(x: MessageScope, c: Of<'cutoffs'>): Promise<void> {
  const result = await ingestCutoffReport(x.s.deps, x.nodeId, {
    report_id: c.reportId,
    entries: c.entries.map((e) => ({
      subscription_id: e.subscriptionId,
      reason: cutoffReason(e.reason),
      at_ms: e.atMs,
      slice_id: e.sliceId,
      slice_used_bytes: e.sliceUsedBytes,
    })),
  });
  if (result.applied && (result.recorded > 0 || result.invalid > 0))
    x.s.deps.log.info(
      {
        node_id: x.nodeId,
        report_id: String(c.reportId),
        recorded: result.recorded,
        invalid: result.invalid,
        regranted: result.regranted.length,
      },
      'node cut users on its own',
    );
  x.session.send({ cutoffAck: { reportId: c.reportId } });
}

/**
 * A UsageReport: staged exactly once (its report id; domain agents/usage-fold.ts), counted,
 * acknowledged, and the fold asked to credit it. While the staged backlog is over its limit the
 * acknowledgement waits for the fold (the agent keeps the report until then).
 */
async function onUsage(x: MessageScope, u: Of<'usage'>): Promise<void> {
  await x.s.usageFolder.room();
  const result = await x.s.usageSlots.run(() =>
    stageUsageReport(x.s.deps, x.nodeId, {
      report_id: u.reportId,
      entries: u.entries.map((e) => ({
        subscription_id: e.subscriptionId,
        uplink_bytes: e.uplinkBytes,
        downlink_bytes: e.downlinkBytes,
      })),
    }),
  );
  countUsage(x.s.deps, result, u.entries.length);
  if (result.invalid > 0)
    x.s.deps.log.info({ node_id: x.nodeId, report_id: String(u.reportId), invalid: result.invalid }, 'usage entries dropped: invalid');
  x.session.send({ usageAck: { reportId: u.reportId } });
  if (result.staged > 0) x.s.usageFolder.kick();
}

/** A LogBatch answering get_logs: handed to the replica that asked (its reply topic). */
async function onLogs(x: MessageScope, logs: Of<'logs'>, fault: InboundFault | null): Promise<void> {
  let entries = logs.entries;
  if (fault) {
    if (!fault.field.startsWith('logs.entries.')) {
      x.s.deps.log.warn({ node_id: x.nodeId, fault: describeFault(fault) }, 'a log batch was dropped');
      return;
    }
    entries = entries.filter((e) => textFault(e) === null);
    x.s.deps.log.warn(
      { node_id: x.nodeId, command_id: logs.commandId, left_out: logs.entries.length - entries.length },
      'log lines that break the text rule were left out',
    );
  }
  const reply: AgentReply = {
    type: 'logs',
    eof: logs.eof,
    entries: entries.map((e) => ({ timestamp_ms: Number(e.timestampMs), source: sourceName(e.source), line: e.line })),
  };
  await x.s.deps.bus.publish(replyTopic(logs.commandId), reply);
}

/** An UpgradeResult: the asked upgrade's outcome recorded. */
async function onUpgradeResult(x: MessageScope, r: Of<'upgradeResult'>): Promise<void> {
  const state = await recordAgentUpgradeResult(x.s.deps, x.nodeId, r);
  if (state)
    x.s.deps.log[state === 'failed' ? 'warn' : 'info'](
      { node_id: x.nodeId, command_id: r.commandId, agent_version: r.agentVersion, ...(r.success ? {} : { error: r.error }) },
      state === 'failed' ? 'agent upgrade failed; the old agent runs on' : 'agent upgraded',
    );
}

/** A CertRenewal: a new client certificate, or the refusal in CertIssued.error. */
async function onCertRenewal(x: MessageScope, renewal: Of<'certRenewal'>, fault: InboundFault | null): Promise<void> {
  // A refused renewal is answered (CertIssued.error, our extension) and the stream stays
  // open: the agent keeps its current certificate and may try again (issue 12.8).
  if (fault) {
    x.session.send({ certIssued: { clientCertPem: '', error: describeFault(fault) } });
    return;
  }
  try {
    const issued = await renewAgentCertificate(x.s.deps, x.s.ca, x.nodeId, renewal.csrPem, { ip: x.ip });
    x.session.send({ certIssued: { clientCertPem: issued.client_cert_pem, error: '' } });
  } catch (err) {
    if (!isDomainError(err) || err.type !== 'validation') throw err;
    const mapped = toGrpcError(err) as ServerError;
    x.session.send({ certIssued: { clientCertPem: '', error: mapped.details } });
  }
}

/** A device key in its one spelling: an IPv4 address, or an IPv6 /64 as deviceAddress writes it (`2001:db8:1:2::/64`). */
function isDeviceKey(a: string): boolean {
  if (a.length > 64) return false;
  return a.endsWith('::/64') ? deviceAddress(a.slice(0, -3)) === a : !a.includes(':') && deviceAddress(a) === a;
}

/**
 * A DeviceReport (issue 36): the node's whole picture of its users' client addresses. What is
 * not a device key (@svc/proto deviceAddress, in its one spelling) or breaks the text rule is
 * dropped, not refused (the agent reads addresses off sockets and logs); the domain bounds the
 * rest and runs the fleet-wide count (devices/device-report.ts).
 */
async function onDevices(x: MessageScope, d: Of<'devices'>): Promise<void> {
  const users = d.users.map((u) => ({
    subscription_id: u.subscriptionId,
    addresses: u.addresses.filter(isDeviceKey),
  }));
  const result = await recordDeviceReport(x.s.deps, x.nodeId, users);
  const bad = d.users.reduce((n, u) => n + u.addresses.length, 0) - users.reduce((n, u) => n + u.addresses.length, 0);
  if (result.dropped + bad > 0) x.s.deps.log.info({ node_id: x.nodeId, dropped: result.dropped + bad }, 'device report entries dropped');
}

/** One message of the agent, by its kind. */
export async function handleAgentMessage(x: MessageScope, m: AgentMessage, fault: InboundFault | null): Promise<void> {
  if (fault && !m.certRenewal && !m.logs && !m.devices) throw new ServerError(fault.code, describeFault(fault));
  if (m.applyResult) return onApplyResult(x, m.applyResult);
  if (m.status) return onStatus(x, m.status);
  if (m.usage) return onUsage(x, m.usage);
  if (m.cutoffs) return onCutoffs(x, m.cutoffs);
  if (m.logs) return onLogs(x, m.logs, fault);
  if (m.upgradeResult) return onUpgradeResult(x, m.upgradeResult);
  if (m.certRenewal) return onCertRenewal(x, m.certRenewal, fault);
  if (m.devices) return onDevices(x, m.devices);
  if (m.hello) x.s.deps.log.warn({ node_id: x.nodeId }, 'a second Hello on one stream was ignored');
}
