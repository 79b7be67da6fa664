/**
 * Proves the wire contract svc.controlplane.v1 against the control-plane spec
 * (sections 2.1 and 4.1): field numbers, wire types, oneof membership, enum
 * numbers and the service definition, as seen on the wire.
 *
 * The bytes produced by the generated code are parsed with a minimal protobuf
 * reader written here (independent of the generated code and of
 * @bufbuild/protobuf), and compared with field numbers copied from the spec.
 * A tag on the wire is varint(field_number << 3 | wire_type).
 */
import { createChannel, createClient, createServer } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import {
  AgentMessage,
  ApplyResult,
  CertIssued,
  Certificate,
  CertRenewal,
  Command,
  ControlPlaneDefinition,
  type ControlPlaneServiceImplementation,
  DesiredState,
  EnrollRequest,
  EnrollResponse,
  GetLogs,
  GrpcSettings,
  Hello,
  HttpUpgradeSettings,
  Inbound,
  InboundUser,
  LogBatch,
  LogEntry,
  LogSource,
  Network,
  NodeConfig,
  Outbound,
  Protocol,
  RealitySettings,
  RoutingRule,
  SecurityT,
  ServerMessage,
  ShadowsocksAccount,
  Sniffing,
  StartLogStream,
  StatusReport,
  StreamSettings,
  TcpSettings,
  TlsSettings,
  TrojanAccount,
  UpgradeAgent,
  UpgradeResult,
  UsageAck,
  UsageEntry,
  UsageReport,
  VlessAccount,
  VmessAccount,
  WsSettings,
  XhttpMode,
  XhttpSettings,
  XrayConfig,
} from './index.ts';

// ---------------------------------------------------------------------------
// Minimal independent protobuf reader
// ---------------------------------------------------------------------------

/** Wire types (protobuf encoding spec). */
const VARINT = 0; // int32, int64, uint32, bool, enum
const I64 = 1; // double
const LEN = 2; // string, bytes, embedded message, map entry
const I32 = 5;

type WireField = {
  field: number;
  wireType: number;
  /** Raw bytes of the tag varint. */
  tag: number[];
  /** Payload of a LEN field. */
  payload: Uint8Array;
};

function readVarint(buf: Uint8Array, pos: number): { value: bigint; next: number } {
  let value = 0n;
  let shift = 0n;
  for (let i = pos; i < buf.length; i++) {
    const b = buf[i] as number;
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return { value, next: i + 1 };
    shift += 7n;
  }
  throw new Error(`truncated varint at ${pos}`);
}

/** Top-level fields of an encoded message, in wire order. */
function fields(buf: Uint8Array): WireField[] {
  const out: WireField[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const start = pos;
    const t = readVarint(buf, pos);
    pos = t.next;
    const field = Number(t.value >> 3n);
    const wireType = Number(t.value & 7n);
    const tag = Array.from(buf.subarray(start, pos));
    let payload: Uint8Array = new Uint8Array();
    switch (wireType) {
      case VARINT:
        pos = readVarint(buf, pos).next;
        break;
      case I64:
        pos += 8;
        break;
      case I32:
        pos += 4;
        break;
      case LEN: {
        const len = readVarint(buf, pos);
        payload = buf.subarray(len.next, len.next + Number(len.value));
        pos = len.next + Number(len.value);
        break;
      }
      default:
        throw new Error(`unexpected wire type ${wireType} at ${start}`);
    }
    if (pos > buf.length) throw new Error(`field ${field} overruns the buffer`);
    out.push({ field, wireType, tag, payload });
  }
  return out;
}

/** [field number, wire type] of every top-level field, in wire order. */
function layout(buf: Uint8Array): [number, number][] {
  return fields(buf).map((f) => [f.field, f.wireType]);
}

/** Payload of the nested LEN field reached by following field numbers. */
function at(buf: Uint8Array, ...path: number[]): Uint8Array {
  let cur = buf;
  for (const n of path) {
    const f = fields(cur).find((x) => x.field === n);
    if (!f) throw new Error(`field ${n} not found on path ${path.join('.')}`);
    expect(f.wireType).toBe(LEN);
    cur = f.payload;
  }
  return cur;
}

/** Expected tag bytes: varint(field << 3 | wireType). */
function tag(field: number, wireType: number): number[] {
  let v = (field << 3) | wireType;
  const out: number[] = [];
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

const bytes = (...b: number[]) => Uint8Array.from(b);
const str = (s: string) => Array.from(new TextEncoder().encode(s));

// Sample sub-messages with every field non-default (proto3 omits defaults).
const vless = { id: 'uuid-1', flow: 'xtls-rprx-vision' };
const tlsSettings = {
  serverNames: ['a.example'],
  alpn: 'h2',
  minVersion: '1.3',
  certificateId: 'cert-1',
};
const reality = {
  dest: 'www.example.com:443',
  serverNames: ['www.example.com'],
  privateKey: 'priv',
  publicKey: 'pub',
  shortIds: ['ab'],
  fingerprint: 'chrome',
};

// ---------------------------------------------------------------------------

describe('helper sanity: tag = varint(field << 3 | wire type)', () => {
  it('computes single- and two-byte tags', () => {
    expect(tag(1, LEN)).toEqual([0x0a]);
    expect(tag(10, LEN)).toEqual([0x52]);
    expect(tag(15, LEN)).toEqual([0x7a]);
    expect(tag(16, LEN)).toEqual([0x82, 0x01]);
    expect(tag(20, LEN)).toEqual([0xa2, 0x01]);
    expect(tag(21, LEN)).toEqual([0xaa, 0x01]);
  });
});

describe('enums carry the numbers fixed by the spec', () => {
  // Name -> number pairs of a TS numeric enum (dropping reverse mappings), minus
  // ts-proto's UNRECOGNIZED = -1, which is TS-only and never sent on the wire.
  const entries = (e: Record<string, string | number>) =>
    Object.entries(e).filter(([k]) => Number.isNaN(Number(k)) && k !== 'UNRECOGNIZED');

  it('Protocol: PROTOCOL_UNSPECIFIED 0, VLESS 1 .. BLACKHOLE 6', () => {
    expect(entries(Protocol)).toEqual([
      ['PROTOCOL_UNSPECIFIED', 0],
      ['VLESS', 1],
      ['VMESS', 2],
      ['TROJAN', 3],
      ['SHADOWSOCKS', 4],
      ['FREEDOM', 5],
      ['BLACKHOLE', 6],
    ]);
  });

  it('Network: NETWORK_UNSPECIFIED 0, TCP 1 .. XHTTP 5', () => {
    expect(entries(Network)).toEqual([
      ['NETWORK_UNSPECIFIED', 0],
      ['TCP', 1],
      ['WS', 2],
      ['GRPC', 3],
      ['HTTPUPGRADE', 4],
      ['XHTTP', 5],
    ]);
  });

  it('SecurityT: SECURITY_UNSPECIFIED 0, NONE 1, TLS 2, REALITY 3', () => {
    expect(entries(SecurityT)).toEqual([
      ['SECURITY_UNSPECIFIED', 0],
      ['NONE', 1],
      ['TLS', 2],
      ['REALITY', 3],
    ]);
  });

  it('LogSource: LOG_SOURCE_UNSPECIFIED 0, AGENT 1, XRAY 2', () => {
    expect(entries(LogSource)).toEqual([
      ['LOG_SOURCE_UNSPECIFIED', 0],
      ['AGENT', 1],
      ['XRAY', 2],
    ]);
  });

  it('XhttpMode: XHTTP_MODE_UNSPECIFIED 0, AUTO 1 .. STREAM_ONE 4', () => {
    expect(entries(XhttpMode)).toEqual([
      ['XHTTP_MODE_UNSPECIFIED', 0],
      ['AUTO', 1],
      ['PACKET_UP', 2],
      ['STREAM_UP', 3],
      ['STREAM_ONE', 4],
    ]);
  });

  it('an enum field is sent as its number (XhttpSettings.mode 3 = STREAM_ONE 4)', () => {
    const b = XhttpSettings.encode(XhttpSettings.fromPartial({ mode: XhttpMode.STREAM_ONE })).finish();
    expect(Array.from(b)).toEqual([...tag(3, VARINT), 4]);
  });
});

describe('enrollment messages: field numbers', () => {
  it('EnrollRequest: token 1, csr_pem 2, hostname 3, agent_version 4', () => {
    const b = EnrollRequest.encode(EnrollRequest.fromPartial({ token: 't', csrPem: 'c', hostname: 'h', agentVersion: 'v' })).finish();
    expect(layout(b)).toEqual([
      [1, LEN],
      [2, LEN],
      [3, LEN],
      [4, LEN],
    ]);
    expect(Array.from(b)).toEqual([
      ...tag(1, LEN),
      1,
      ...str('t'),
      ...tag(2, LEN),
      1,
      ...str('c'),
      ...tag(3, LEN),
      1,
      ...str('h'),
      ...tag(4, LEN),
      1,
      ...str('v'),
    ]);
  });

  it('EnrollResponse: node_id 1, client_cert_pem 2, ca_cert_pem 3', () => {
    const b = EnrollResponse.encode(EnrollResponse.fromPartial({ nodeId: 'n', clientCertPem: 'c', caCertPem: 'a' })).finish();
    expect(layout(b)).toEqual([
      [1, LEN],
      [2, LEN],
      [3, LEN],
    ]);
  });
});

describe('AgentMessage oneof msg: hello 1, apply_result 2, status 3, usage 4, logs 5, cert_renewal 6 (+ upgrade_result 7, ours)', () => {
  const cases: [string, AgentMessage, number][] = [
    ['hello', AgentMessage.fromPartial({ hello: { hostname: 'h' } }), 1],
    ['apply_result', AgentMessage.fromPartial({ applyResult: { success: true } }), 2],
    ['status', AgentMessage.fromPartial({ status: { xrayRunning: true } }), 3],
    ['usage', AgentMessage.fromPartial({ usage: { reportId: 1n } }), 4],
    ['logs', AgentMessage.fromPartial({ logs: { commandId: 'c' } }), 5],
    ['cert_renewal', AgentMessage.fromPartial({ certRenewal: { csrPem: 'p' } }), 6],
    ['upgrade_result', AgentMessage.fromPartial({ upgradeResult: { commandId: 'c' } }), 7],
  ];
  for (const [name, msg, n] of cases) {
    it(`${name} is field ${n} (tag ${tag(n, LEN)
      .map((x) => `0x${x.toString(16)}`)
      .join(' ')})`, () => {
      const b = AgentMessage.encode(msg).finish();
      const f = fields(b);
      expect(f).toHaveLength(1);
      expect(f[0]?.tag).toEqual(tag(n, LEN));
    });
  }

  it('decodes hand-built bytes: field 6 is cert_renewal, its field 1 is csr_pem', () => {
    const inner = [...tag(1, LEN), 3, ...str('csr')];
    const m = AgentMessage.decode(bytes(...tag(6, LEN), inner.length, ...inner));
    expect(m.certRenewal).toEqual({ csrPem: 'csr' });
    expect(m.hello ?? m.applyResult ?? m.status ?? m.usage ?? m.logs).toBeUndefined();
  });
});

describe('agent -> backend messages: field numbers and wire types', () => {
  it('Hello: hostname 1, os 2, arch 3, agent_version 4, xray_version 5, applied_revision 6 (int64 varint)', () => {
    const b = Hello.encode(
      Hello.fromPartial({
        hostname: 'h',
        os: 'linux',
        arch: 'amd64',
        agentVersion: '1',
        xrayVersion: '25',
        appliedRevision: 7n,
      }),
    ).finish();
    expect(layout(b)).toEqual([
      [1, LEN],
      [2, LEN],
      [3, LEN],
      [4, LEN],
      [5, LEN],
      [6, VARINT],
    ]);
    expect(Array.from(b.subarray(-2))).toEqual([...tag(6, VARINT), 7]);
  });

  it('ApplyResult: revision 1 (int64), success 2 (bool), error 3', () => {
    const b = ApplyResult.encode(ApplyResult.fromPartial({ revision: 3n, success: true, error: 'e' })).finish();
    expect(layout(b)).toEqual([
      [1, VARINT],
      [2, VARINT],
      [3, LEN],
    ]);
  });

  it('StatusReport: xray_running 1, cpu_percent 2 (double), memory/disk 3-6 (int64), connections 7, xray_uptime_seconds 8', () => {
    const b = StatusReport.encode(
      StatusReport.fromPartial({
        xrayRunning: true,
        cpuPercent: 12.5,
        memoryUsedBytes: 1n,
        memoryTotalBytes: 2n,
        diskUsedBytes: 3n,
        diskTotalBytes: 4n,
        connections: 5,
        xrayUptimeSeconds: 6n,
      }),
    ).finish();
    expect(layout(b)).toEqual([
      [1, VARINT],
      [2, I64],
      [3, VARINT],
      [4, VARINT],
      [5, VARINT],
      [6, VARINT],
      [7, VARINT],
      [8, VARINT],
    ]);
  });

  it('UsageReport: report_id 1 (int64), entries 2; UsageEntry: subscription_id 1, uplink_bytes 2, downlink_bytes 3', () => {
    const b = UsageReport.encode(
      UsageReport.fromPartial({
        reportId: 9n,
        entries: [{ subscriptionId: 's', uplinkBytes: 10n, downlinkBytes: 20n }],
      }),
    ).finish();
    expect(layout(b)).toEqual([
      [1, VARINT],
      [2, LEN],
    ]);
    expect(layout(at(b, 2))).toEqual([
      [1, LEN],
      [2, VARINT],
      [3, VARINT],
    ]);
    expect(layout(UsageEntry.encode(UsageEntry.decode(at(b, 2))).finish())).toEqual(layout(at(b, 2)));
  });

  it('LogBatch: command_id 1, entries 2, eof 3; LogEntry: timestamp_ms 1 (int64), source 2 (enum), line 3', () => {
    const b = LogBatch.encode(
      LogBatch.fromPartial({
        commandId: 'c',
        entries: [{ timestampMs: 1_700_000_000_000n, source: LogSource.XRAY, line: 'l' }],
        eof: true,
      }),
    ).finish();
    expect(layout(b)).toEqual([
      [1, LEN],
      [2, LEN],
      [3, VARINT],
    ]);
    expect(layout(at(b, 2))).toEqual([
      [1, VARINT],
      [2, VARINT],
      [3, LEN],
    ]);
    expect(LogEntry.decode(at(b, 2)).source).toBe(LogSource.XRAY);
  });

  it('CertRenewal: csr_pem 1', () => {
    expect(layout(CertRenewal.encode({ csrPem: 'p' }).finish())).toEqual([[1, LEN]]);
  });
});

describe('ServerMessage oneof msg: desired_state 1, usage_ack 2, command 3, cert_issued 4', () => {
  const cases: [string, ServerMessage, number][] = [
    ['desired_state', ServerMessage.fromPartial({ desiredState: { revision: 1n } }), 1],
    ['usage_ack', ServerMessage.fromPartial({ usageAck: { reportId: 1n } }), 2],
    ['command', ServerMessage.fromPartial({ command: { commandId: 'c' } }), 3],
    ['cert_issued', ServerMessage.fromPartial({ certIssued: { clientCertPem: 'p' } }), 4],
  ];
  for (const [name, msg, n] of cases) {
    it(`${name} is field ${n}`, () => {
      const f = fields(ServerMessage.encode(msg).finish());
      expect(f).toHaveLength(1);
      expect(f[0]?.tag).toEqual(tag(n, LEN));
    });
  }

  it('DesiredState: revision 1 (int64), config 2; UsageAck: report_id 1; CertIssued: client_cert_pem 1', () => {
    expect(
      layout(DesiredState.encode(DesiredState.fromPartial({ revision: 5n, config: { certificates: [{ id: 'x' }] } })).finish()),
    ).toEqual([
      [1, VARINT],
      [2, LEN],
    ]);
    expect(layout(UsageAck.encode({ reportId: 5n }).finish())).toEqual([[1, VARINT]]);
    expect(layout(CertIssued.encode({ clientCertPem: 'p', error: '' }).finish())).toEqual([[1, LEN]]);
    // Our extension (docs/agent-gateway.md): a refused renewal's reason, field 2.
    expect(layout(CertIssued.encode({ clientCertPem: '', error: 'e' }).finish())).toEqual([[2, LEN]]);
  });
});

describe('Command: command_id 1; oneof cmd: restart_xray 2, get_logs 3, start_log_stream 4, stop_log_stream 5 (+ upgrade_agent 6, ours)', () => {
  const cases: [string, Command, number][] = [
    ['restart_xray', Command.fromPartial({ commandId: 'c', restartXray: {} }), 2],
    ['get_logs', Command.fromPartial({ commandId: 'c', getLogs: { source: LogSource.AGENT, limit: 100 } }), 3],
    ['start_log_stream', Command.fromPartial({ commandId: 'c', startLogStream: { source: LogSource.XRAY } }), 4],
    ['stop_log_stream', Command.fromPartial({ commandId: 'c', stopLogStream: {} }), 5],
    ['upgrade_agent', Command.fromPartial({ commandId: 'c', upgradeAgent: { version: '1.0.0' } }), 6],
  ];
  for (const [name, msg, n] of cases) {
    it(`${name} is field ${n}, after command_id 1`, () => {
      const f = fields(Command.encode(msg).finish());
      expect(f.map((x) => x.tag)).toEqual([tag(1, LEN), tag(n, LEN)]);
    });
  }

  it('an empty oneof member (RestartXray, StopLogStream) is still on the wire: tag + zero length', () => {
    expect(Array.from(Command.encode(Command.fromPartial({ restartXray: {} })).finish())).toEqual([...tag(2, LEN), 0]);
    expect(Array.from(Command.encode(Command.fromPartial({ stopLogStream: {} })).finish())).toEqual([...tag(5, LEN), 0]);
  });

  it('decodes hand-built bytes: ServerMessage.command 3 > Command.stop_log_stream 5 (empty)', () => {
    const cmd = [...tag(1, LEN), 2, ...str('s1'), ...tag(5, LEN), 0];
    const m = ServerMessage.decode(bytes(...tag(3, LEN), cmd.length, ...cmd));
    expect(m.command?.commandId).toBe('s1');
    expect(m.command?.stopLogStream).toEqual({});
    expect(m.command?.startLogStream ?? m.command?.restartXray ?? m.command?.getLogs).toBeUndefined();
  });

  it('UpgradeAgent: version 1, url 2, sha256 3; UpgradeResult: command_id 1, success 2 (bool), error 3, agent_version 4', () => {
    expect(Array.from(UpgradeAgent.encode({ version: 'v', url: 'u', sha256: 's' }).finish())).toEqual([
      ...tag(1, LEN),
      1,
      ...str('v'),
      ...tag(2, LEN),
      1,
      ...str('u'),
      ...tag(3, LEN),
      1,
      ...str('s'),
    ]);
    expect(Array.from(UpgradeResult.encode({ commandId: 'c', success: true, error: 'e', agentVersion: 'a' }).finish())).toEqual([
      ...tag(1, LEN),
      1,
      ...str('c'),
      ...tag(2, VARINT),
      1,
      ...tag(3, LEN),
      1,
      ...str('e'),
      ...tag(4, LEN),
      1,
      ...str('a'),
    ]);
  });

  it('GetLogs: source 1 (enum), limit 2 (int32); StartLogStream: source 1 (enum)', () => {
    expect(Array.from(GetLogs.encode({ source: LogSource.AGENT, limit: 50 }).finish())).toEqual([
      ...tag(1, VARINT),
      1,
      ...tag(2, VARINT),
      50,
    ]);
    expect(Array.from(StartLogStream.encode({ source: LogSource.XRAY }).finish())).toEqual([...tag(1, VARINT), 2]);
  });
});

describe('desired node configuration: field numbers', () => {
  it('NodeConfig: xray 1, certificates 10 (tag 0x52); Certificate: id 1, cert_pem 2, key_pem 3', () => {
    const b = NodeConfig.encode(
      NodeConfig.fromPartial({
        xray: { inbounds: [{ tag: 'in' }] },
        certificates: [{ id: 'c', certPem: 'p', keyPem: 'k' }],
      }),
    ).finish();
    const f = fields(b);
    expect(f.map((x) => x.tag)).toEqual([tag(1, LEN), tag(10, LEN)]);
    expect(f[1]?.tag).toEqual([0x52]);
    expect(layout(at(b, 10))).toEqual([
      [1, LEN],
      [2, LEN],
      [3, LEN],
    ]);
    expect(Certificate.decode(at(b, 10))).toEqual({ id: 'c', certPem: 'p', keyPem: 'k' });
  });

  it('XrayConfig: inbounds 1, outbounds 2, routing_rules 3; RoutingRule: inbound_tag 1, outbound_tag 2, protocols 3', () => {
    const b = XrayConfig.encode(
      XrayConfig.fromPartial({
        inbounds: [{ tag: 'in' }],
        outbounds: [{ tag: 'out' }],
        routingRules: [{ inboundTag: 'in', outboundTag: 'out', protocols: ['bittorrent'] }],
      }),
    ).finish();
    expect(layout(b)).toEqual([
      [1, LEN],
      [2, LEN],
      [3, LEN],
    ]);
    expect(layout(at(b, 3))).toEqual([
      [1, LEN],
      [2, LEN],
      [3, LEN],
    ]);
    expect(RoutingRule.decode(at(b, 3)).protocols).toEqual(['bittorrent']);
  });

  it('Inbound: tag 1, protocol 2, port 3 (uint32), listen 4, stream 5, sniffing 6, users 7', () => {
    const b = Inbound.encode(
      Inbound.fromPartial({
        tag: 'in',
        protocol: Protocol.VLESS,
        port: 443,
        listen: '0.0.0.0',
        stream: { network: Network.TCP },
        sniffing: { enabled: true },
        users: [{ email: 's@svc' }],
      }),
    ).finish();
    expect(layout(b)).toEqual([
      [1, LEN],
      [2, VARINT],
      [3, VARINT],
      [4, LEN],
      [5, LEN],
      [6, LEN],
      [7, LEN],
    ]);
  });

  const userCases: [string, InboundUser, number][] = [
    ['vless', InboundUser.fromPartial({ email: 'e', vless }), 10],
    ['vmess', InboundUser.fromPartial({ email: 'e', vmess: { id: 'u' } }), 11],
    ['trojan', InboundUser.fromPartial({ email: 'e', trojan: { password: 'p' } }), 12],
    ['shadowsocks', InboundUser.fromPartial({ email: 'e', shadowsocks: { method: 'm', password: 'p' } }), 13],
  ];
  for (const [name, msg, n] of userCases) {
    it(`InboundUser: email 1, oneof account ${name} ${n}`, () => {
      const f = fields(InboundUser.encode(msg).finish());
      expect(f.map((x) => x.tag)).toEqual([tag(1, LEN), tag(n, LEN)]);
    });
  }

  it('InboundUser.vless is field 10 (tag byte 0x52), reached from DesiredState.config > xray > inbounds > users', () => {
    const b = DesiredState.encode(
      DesiredState.fromPartial({
        revision: 1n,
        config: { xray: { inbounds: [{ tag: 'in', users: [{ email: 's@svc', vless }] }] } },
      }),
    ).finish();
    // DesiredState.config 2 > NodeConfig.xray 1 > XrayConfig.inbounds 1 > Inbound.users 7
    const user = at(b, 2, 1, 1, 7);
    expect(Array.from(user.subarray(0, 1))).toEqual([0x0a]); // email 1
    const f = fields(user);
    expect(f[1]?.tag).toEqual([0x52]);
    expect(VlessAccount.decode(at(user, 10))).toEqual(vless);
  });

  const outboundCases: [string, Outbound, number][] = [
    ['vless', Outbound.fromPartial({ tag: 'o', vless }), 10],
    ['trojan', Outbound.fromPartial({ tag: 'o', trojan: { password: 'p' } }), 11],
    ['shadowsocks', Outbound.fromPartial({ tag: 'o', shadowsocks: { method: 'm', password: 'p' } }), 12],
  ];
  for (const [name, msg, n] of outboundCases) {
    it(`Outbound: oneof account ${name} ${n}`, () => {
      const f = fields(Outbound.encode(msg).finish());
      expect(f.map((x) => x.tag)).toEqual([tag(1, LEN), tag(n, LEN)]);
    });
  }

  it('Outbound: tag 1, protocol 2, address 3, port 4, account 10, stream 20 (tag bytes 0xa2 0x01)', () => {
    const b = Outbound.encode(
      Outbound.fromPartial({
        tag: 'hop',
        protocol: Protocol.VLESS,
        address: 'next.example',
        port: 443,
        vless,
        stream: { network: Network.GRPC, security: SecurityT.REALITY },
      }),
    ).finish();
    expect(layout(b)).toEqual([
      [1, LEN],
      [2, VARINT],
      [3, LEN],
      [4, VARINT],
      [10, LEN],
      [20, LEN],
    ]);
    expect(fields(b)[5]?.tag).toEqual([0xa2, 0x01]);
    expect(StreamSettings.decode(at(b, 20))).toMatchObject({ network: Network.GRPC, security: SecurityT.REALITY });
  });

  it('Outbound.stream 20 is outside the account oneof: both are kept alongside each other', () => {
    const m = Outbound.decode(
      Outbound.encode(Outbound.fromPartial({ trojan: { password: 'p' }, stream: { network: Network.WS } })).finish(),
    );
    expect(m.trojan).toEqual({ password: 'p' });
    expect(m.stream?.network).toBe(Network.WS);
  });

  it('accounts: VlessAccount id 1, flow 2; VmessAccount id 1; TrojanAccount password 1; ShadowsocksAccount method 1, password 2', () => {
    expect(layout(VlessAccount.encode(vless).finish())).toEqual([
      [1, LEN],
      [2, LEN],
    ]);
    expect(layout(VmessAccount.encode({ id: 'u' }).finish())).toEqual([[1, LEN]]);
    expect(layout(TrojanAccount.encode({ password: 'p' }).finish())).toEqual([[1, LEN]]);
    expect(layout(ShadowsocksAccount.encode({ method: 'm', password: 'p' }).finish())).toEqual([
      [1, LEN],
      [2, LEN],
    ]);
  });
});

describe('StreamSettings: network 1, security 2, oneof transport 10..14, oneof tls: tls_settings 20, reality 21', () => {
  const transportCases: [string, StreamSettings, number][] = [
    ['tcp', StreamSettings.fromPartial({ tcp: { acceptProxyProtocol: true } }), 10],
    ['ws', StreamSettings.fromPartial({ ws: { path: '/w' } }), 11],
    ['grpc', StreamSettings.fromPartial({ grpc: { serviceName: 's' } }), 12],
    ['httpupgrade', StreamSettings.fromPartial({ httpupgrade: { path: '/h' } }), 13],
    ['xhttp', StreamSettings.fromPartial({ xhttp: { path: '/x' } }), 14],
  ];
  for (const [name, msg, n] of transportCases) {
    it(`transport ${name} is field ${n}`, () => {
      expect(fields(StreamSettings.encode(msg).finish()).map((x) => x.tag)).toEqual([tag(n, LEN)]);
    });
  }

  it('tls_settings is field 20 (tag bytes 0xa2 0x01)', () => {
    const b = StreamSettings.encode(
      StreamSettings.fromPartial({ network: Network.TCP, security: SecurityT.TLS, tcp: {}, tlsSettings }),
    ).finish();
    expect(layout(b)).toEqual([
      [1, VARINT],
      [2, VARINT],
      [10, LEN],
      [20, LEN],
    ]);
    expect(fields(b)[3]?.tag).toEqual([0xa2, 0x01]);
    expect(TlsSettings.decode(at(b, 20))).toEqual(tlsSettings);
  });

  it('reality is field 21 (tag bytes 0xaa 0x01)', () => {
    const b = StreamSettings.encode(
      StreamSettings.fromPartial({ network: Network.XHTTP, security: SecurityT.REALITY, xhttp: { path: '/' }, reality }),
    ).finish();
    expect(layout(b)).toEqual([
      [1, VARINT],
      [2, VARINT],
      [14, LEN],
      [21, LEN],
    ]);
    expect(fields(b)[3]?.tag).toEqual([0xaa, 0x01]);
    expect(RealitySettings.decode(at(b, 21))).toEqual(reality);
  });

  it('decodes hand-built bytes: field 21 is reality, field 20 is tls_settings', () => {
    const r = [...tag(1, LEN), 1, ...str('d')];
    const t = [...tag(4, LEN), 1, ...str('c')];
    expect(StreamSettings.decode(bytes(...tag(21, LEN), r.length, ...r)).reality?.dest).toBe('d');
    expect(StreamSettings.decode(bytes(...tag(20, LEN), t.length, ...t)).tlsSettings?.certificateId).toBe('c');
  });

  it('transport settings: TcpSettings 1; WsSettings path 1, headers 2 (map entry key 1, value 2); GrpcSettings 1, 2; HttpUpgrade 1, 2; Xhttp 1, 2, 3', () => {
    expect(layout(TcpSettings.encode({ acceptProxyProtocol: true }).finish())).toEqual([[1, VARINT]]);
    const ws = WsSettings.encode({ path: '/w', headers: { Host: 'h' } }).finish();
    expect(layout(ws)).toEqual([
      [1, LEN],
      [2, LEN],
    ]);
    expect(Array.from(at(ws, 2))).toEqual([...tag(1, LEN), 4, ...str('Host'), ...tag(2, LEN), 1, ...str('h')]);
    expect(WsSettings.decode(ws).headers).toEqual({ Host: 'h' });
    expect(layout(GrpcSettings.encode({ serviceName: 's', multiMode: true }).finish())).toEqual([
      [1, LEN],
      [2, VARINT],
    ]);
    expect(layout(HttpUpgradeSettings.encode({ path: '/', host: 'h' }).finish())).toEqual([
      [1, LEN],
      [2, LEN],
    ]);
    expect(layout(XhttpSettings.encode({ path: '/', host: 'h', mode: XhttpMode.AUTO }).finish())).toEqual([
      [1, LEN],
      [2, LEN],
      [3, VARINT],
    ]);
  });

  it('TlsSettings: server_names 1, alpn 2, min_version 3, certificate_id 4', () => {
    expect(layout(TlsSettings.encode(tlsSettings).finish())).toEqual([
      [1, LEN],
      [2, LEN],
      [3, LEN],
      [4, LEN],
    ]);
  });

  it('RealitySettings: dest 1, server_names 2, private_key 3, public_key 4, short_ids 5, fingerprint 6', () => {
    expect(layout(RealitySettings.encode(reality).finish())).toEqual([
      [1, LEN],
      [2, LEN],
      [3, LEN],
      [4, LEN],
      [5, LEN],
      [6, LEN],
    ]);
  });

  it('Sniffing: enabled 1, dest_override 2, route_only 3', () => {
    expect(layout(Sniffing.encode({ enabled: true, destOverride: ['http', 'tls'], routeOnly: true }).finish())).toEqual([
      [1, VARINT],
      [2, LEN],
      [2, LEN],
      [3, VARINT],
    ]);
  });
});

describe('int64 fields are bigint and keep the full 64-bit range', () => {
  it('round-trips values above 2^53 exactly (UsageReport.report_id, UsageEntry byte counters)', () => {
    const big = 2n ** 63n - 1n;
    const m = UsageReport.decode(
      UsageReport.encode(
        UsageReport.fromPartial({
          reportId: big,
          entries: [{ subscriptionId: 's', uplinkBytes: 2n ** 53n + 1n, downlinkBytes: big }],
        }),
      ).finish(),
    );
    expect(m.reportId).toBe(big);
    expect(m.entries[0]?.uplinkBytes).toBe(2n ** 53n + 1n);
    expect(m.entries[0]?.downlinkBytes).toBe(big);
  });

  it('encodes int64 as a plain varint (UsageAck.report_id 300 = 08 ac 02)', () => {
    expect(Array.from(UsageAck.encode({ reportId: 300n }).finish())).toEqual([0x08, 0xac, 0x02]);
  });

  it('rejects values outside int64 instead of truncating them', () => {
    expect(() => UsageAck.encode({ reportId: 2n ** 63n }).finish()).toThrow();
  });

  it('renders int64 as a decimal string in JSON', () => {
    expect(UsageAck.toJSON({ reportId: 2n ** 60n })).toEqual({ reportId: '1152921504606846976' });
  });
});

describe('service ControlPlane (spec 4.1)', () => {
  it('is svc.controlplane.v1.ControlPlane with Enroll (unary) and Sync (bidirectional stream)', () => {
    expect(ControlPlaneDefinition.fullName).toBe('svc.controlplane.v1.ControlPlane');
    expect(ControlPlaneDefinition.methods.enroll).toMatchObject({
      name: 'Enroll',
      requestType: EnrollRequest,
      responseType: EnrollResponse,
      requestStream: false,
      responseStream: false,
    });
    expect(ControlPlaneDefinition.methods.sync).toMatchObject({
      name: 'Sync',
      requestType: AgentMessage,
      responseType: ServerMessage,
      requestStream: true,
      responseStream: true,
    });
    expect(Object.keys(ControlPlaneDefinition.methods)).toEqual(['enroll', 'sync']);
  });

  it('carries messages (with int64 above 2^53) over a real nice-grpc Sync stream', async () => {
    const big = 2n ** 62n + 1n;
    const impl: ControlPlaneServiceImplementation = {
      async enroll(req) {
        return { nodeId: `node-for-${req.hostname}` };
      },
      async *sync(requests) {
        for await (const m of requests) {
          if (m.usage) yield { usageAck: { reportId: m.usage.reportId } };
        }
      },
    };
    const server = createServer();
    server.add(ControlPlaneDefinition, impl);
    const port = await server.listen('127.0.0.1:0');
    const channel = createChannel(`127.0.0.1:${port}`);
    try {
      const client = createClient(ControlPlaneDefinition, channel);
      expect(await client.enroll({ hostname: 'h1' })).toMatchObject({ nodeId: 'node-for-h1' });
      async function* outgoing() {
        yield { hello: { hostname: 'h1', appliedRevision: 0n } };
        yield { usage: { reportId: big, entries: [] } };
      }
      const replies: ServerMessage[] = [];
      for await (const r of client.sync(outgoing())) replies.push(r);
      expect(replies).toHaveLength(1);
      expect(replies[0]?.usageAck?.reportId).toBe(big);
    } finally {
      channel.close();
      await server.shutdown();
    }
  });
});
