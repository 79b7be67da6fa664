import type { InboundUser } from '@svc/proto';
import { afterEach, describe, expect, it } from 'vitest';
import { AddUserOperation, AlterInboundRequest, RemoveUserOperation } from '../src/gen/xray/app/proxyman/command/command.ts';
import {
  GetUsersStatsRequest,
  GetUsersStatsResponse,
  QueryStatsRequest,
  QueryStatsResponse,
  SysStatsResponse,
} from '../src/gen/xray/app/stats/command/command.ts';
import { SecurityType } from '../src/gen/xray/common/protocol/headers.ts';
import type { TypedMessage } from '../src/gen/xray/common/serial/typed_message.ts';
import { Account as ShadowsocksAccount } from '../src/gen/xray/proxy/shadowsocks/config.ts';
import { Account as Shadowsocks2022Account } from '../src/gen/xray/proxy/shadowsocks_2022/config.ts';
import { Account as TrojanAccount } from '../src/gen/xray/proxy/trojan/config.ts';
import { Account as VlessAccount } from '../src/gen/xray/proxy/vless/account.ts';
import { Account as VmessAccount } from '../src/gen/xray/proxy/vmess/account.ts';
import { createEngineApi, type EngineApi, EngineApiError, type EngineApiOptions, packagePrefixOf } from '../src/index.ts';
import { type RecordingEngine, type Reply, startRecordingEngine } from './recording-engine.ts';

/**
 * What the client puts on the wire, read back by decoding it: the gRPC paths and TypedMessage
 * type names carry the engine's package prefix, the accounts carry the contract's credentials,
 * and the Shadowsocks cipher numbers are the engine's own. The answers the engine gives (its
 * counters, its error texts) come back folded and classified.
 */

const UUID = '100147b0-48ee-49da-8321-73284d173bab';
const vmessUser: InboundUser = { email: 'sub_0001@svc', vmess: { id: UUID } };
const ss = (method: string, password = 'secret'): InboundUser => ({ email: 'sub_0002@svc', shadowsocks: { method, password } });

let engine: RecordingEngine | undefined;
let api: EngineApi | undefined;
afterEach(async () => {
  api?.close();
  await engine?.close();
  api = undefined;
  engine = undefined;
});

async function connect(opts: Omit<EngineApiOptions, 'address'>, reply?: (path: string) => Reply) {
  engine = await startRecordingEngine(reply);
  api = createEngineApi({ address: engine.address, ...opts });
  return { engine, api };
}

/** The AlterInbound call the engine received: its path, the inbound tag and the operation. */
function alterInbound(engine: RecordingEngine, index = 0) {
  const call = engine.calls[index];
  if (!call) throw new Error(`no call #${index}`);
  const request = AlterInboundRequest.decode(call.message);
  return { path: call.path, tag: request.tag, operation: request.operation as TypedMessage };
}

/** The account of the user an AddUserOperation carried. */
function addedUser(operation: TypedMessage) {
  const { user } = AddUserOperation.decode(operation.value);
  if (!user?.account) throw new Error('AddUserOperation without a user account');
  return { level: user.level, email: user.email, account: user.account };
}

describe('engine package prefix', () => {
  it('the Xray flavour calls /xray.app.proxyman.command.HandlerService and names xray.* types', async () => {
    const { engine, api } = await connect({ flavour: 'xray' });
    await api.addUser('vmess-in', vmessUser);
    const { path, tag, operation } = alterInbound(engine);
    expect(path).toBe('/xray.app.proxyman.command.HandlerService/AlterInbound');
    expect(tag).toBe('vmess-in');
    expect(operation.type).toBe('xray.app.proxyman.command.AddUserOperation');
    const user = addedUser(operation);
    expect(user).toMatchObject({ level: 0, email: 'sub_0001@svc' });
    expect(user.account.type).toBe('xray.proxy.vmess.Account');
    expect(VmessAccount.decode(user.account.value)).toEqual({ id: UUID, securitySettings: { type: SecurityType.AUTO } });
  });

  it('the v2ray flavour puts v2ray.core. before the same names', async () => {
    const { engine, api } = await connect({ flavour: 'v2ray' });
    await api.addUser('vmess-in', vmessUser);
    await api.removeUser('vmess-in', 'sub_0001@svc');
    await api.sysStats();
    const added = alterInbound(engine, 0);
    expect(added.path).toBe('/v2ray.core.app.proxyman.command.HandlerService/AlterInbound');
    expect(added.operation.type).toBe('v2ray.core.app.proxyman.command.AddUserOperation');
    expect(addedUser(added.operation).account.type).toBe('v2ray.core.proxy.vmess.Account');
    const removed = alterInbound(engine, 1);
    expect(removed.operation.type).toBe('v2ray.core.app.proxyman.command.RemoveUserOperation');
    expect(RemoveUserOperation.decode(removed.operation.value)).toEqual({ email: 'sub_0001@svc' });
    expect(engine.calls[2]?.path).toBe('/v2ray.core.app.stats.command.StatsService/GetSysStats');
  });

  it('packagePrefix overrides the flavour prefix', async () => {
    const { engine, api } = await connect({ flavour: 'xray', packagePrefix: 'fork.core.' });
    await api.addUser('in', { email: 'a@svc', trojan: { password: 'pw' } });
    const { path, operation } = alterInbound(engine);
    expect(path).toBe('/fork.core.app.proxyman.command.HandlerService/AlterInbound');
    expect(addedUser(operation).account.type).toBe('fork.core.proxy.trojan.Account');
    expect(packagePrefixOf('xray')).toBe('xray.');
    expect(packagePrefixOf('v2ray')).toBe('v2ray.core.');
  });

  it('VLESS and Trojan accounts carry the id, the flow and the password', async () => {
    const { engine, api } = await connect({ flavour: 'xray' });
    await api.addUser('vless-in', { email: 'a@svc', vless: { id: UUID, flow: 'xtls-rprx-vision' } });
    await api.addUser('trojan-in', { email: 'b@svc', trojan: { password: 'pw' } });
    const vless = addedUser(alterInbound(engine, 0).operation).account;
    expect(vless.type).toBe('xray.proxy.vless.Account');
    expect(VlessAccount.decode(vless.value)).toEqual({ id: UUID, flow: 'xtls-rprx-vision' });
    const trojan = addedUser(alterInbound(engine, 1).operation).account;
    expect(trojan.type).toBe('xray.proxy.trojan.Account');
    expect(TrojanAccount.decode(trojan.value)).toEqual({ password: 'pw' });
  });
});

describe('Shadowsocks accounts', () => {
  const cipherOnTheWire = async (flavour: 'xray' | 'v2ray', method: string) => {
    const { engine, api } = await connect({ flavour });
    await api.addUser('ss-in', ss(method));
    const account = addedUser(alterInbound(engine).operation).account;
    api.close();
    await engine.close();
    return { type: account.type, ...ShadowsocksAccount.decode(account.value) };
  };

  it.each([
    ['aes-128-gcm', 5, 1],
    ['AES-256-GCM', 6, 2],
    ['chacha20-poly1305', 7, 3],
    ['chacha20-ietf-poly1305', 7, 3],
  ])('%s is cipher %i on Xray and %i on v2ray 4.x', async (method, xray, v2ray) => {
    expect(await cipherOnTheWire('xray', method)).toEqual({ type: 'xray.proxy.shadowsocks.Account', password: 'secret', cipherType: xray });
    expect(await cipherOnTheWire('v2ray', method)).toEqual({
      type: 'v2ray.core.proxy.shadowsocks.Account',
      password: 'secret',
      cipherType: v2ray,
    });
  });

  it('xchacha20 is cipher 8 on Xray and unsupported on v2ray, refused before any call', async () => {
    expect((await cipherOnTheWire('xray', 'xchacha20-ietf-poly1305')).cipherType).toBe(8);
    const { engine, api } = await connect({ flavour: 'v2ray' });
    await expect(api.addUser('ss-in', ss('xchacha20-poly1305'))).rejects.toMatchObject({ kind: 'unsupported' });
    expect(engine.calls).toEqual([]);
  });

  it('a Shadowsocks 2022 user is a shadowsocks_2022.Account with the user key on Xray only', async () => {
    const { engine, api } = await connect({ flavour: 'xray' });
    await api.addUser('ss22-in', ss('2022-blake3-aes-128-gcm', 'c2VydmVyLWtleS0xNmJ5dA==:dXNlci1rZXktMTZieXRlcw=='));
    const account = addedUser(alterInbound(engine).operation).account;
    expect(account.type).toBe('xray.proxy.shadowsocks_2022.Account');
    expect(Shadowsocks2022Account.decode(account.value)).toEqual({ key: 'dXNlci1rZXktMTZieXRlcw==' });
    // A plain key is a single-user inbound's: nothing to add a user to.
    await expect(api.addUser('ss22-in', ss('2022-blake3-aes-128-gcm', 'c2VydmVyLWtleS0xNmJ5dA=='))).rejects.toMatchObject({
      kind: 'unsupported',
    });
    const v2ray = createEngineApi({ address: engine.address, flavour: 'v2ray' });
    await expect(v2ray.addUser('ss22-in', ss('2022-blake3-aes-128-gcm', 'a:b'))).rejects.toMatchObject({ kind: 'unsupported' });
    v2ray.close();
    expect(engine.calls).toHaveLength(1);
  });

  it('a method neither engine has is unsupported', async () => {
    const { api } = await connect({ flavour: 'xray' });
    const err = await api.addUser('ss-in', ss('rc4-md5')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineApiError);
    expect(err).toMatchObject({ kind: 'unsupported', message: expect.stringContaining('rc4-md5') });
  });
});

describe("the engine's answers", () => {
  it('user traffic asks for the user>>> counters and folds uplink and downlink per email', async () => {
    const stat = [
      { name: 'user>>>b@svc>>>traffic>>>downlink', value: 7n },
      { name: 'inbound>>>vmess-in>>>traffic>>>uplink', value: 100n },
      { name: 'user>>>a@svc>>>traffic>>>uplink', value: 2n ** 60n },
      { name: 'user>>>b@svc>>>traffic>>>uplink', value: 5n },
    ];
    const { engine, api } = await connect({ flavour: 'v2ray' }, () => ({ message: QueryStatsResponse.encode({ stat }).finish() }));
    expect(await api.userTraffic({ reset: true })).toEqual([
      { email: 'a@svc', uplink: 2n ** 60n, downlink: 0n },
      { email: 'b@svc', uplink: 5n, downlink: 7n },
    ]);
    expect(engine.calls[0]?.path).toBe('/v2ray.core.app.stats.command.StatsService/QueryStats');
    expect(QueryStatsRequest.decode(engine.calls[0]?.message as Uint8Array)).toEqual({ pattern: 'user>>>', reset: true });
  });

  it('system stats name the Go runtime figures', async () => {
    const reply = SysStatsResponse.fromPartial({ NumGoroutine: 42, Alloc: 1000n, Sys: 9000n, Uptime: 61 });
    const { api } = await connect({ flavour: 'xray' }, () => ({ message: SysStatsResponse.encode(reply).finish() }));
    expect(await api.sysStats()).toEqual({ uptimeSeconds: 61, numGoroutine: 42, allocBytes: 1000n, sysBytes: 9000n });
  });

  it("online addresses ask Xray's GetUsersStats without traffic and fold them per email (last seen in ms); an engine without the call answers null", async () => {
    const users = [
      {
        email: 'a@svc',
        ips: [
          { ip: '198.51.100.7', lastSeen: 1_767_000_000n },
          { ip: '[2001:db8::9]', lastSeen: 1_767_000_005n },
        ],
      },
      { email: 'b@svc', ips: [] },
    ];
    const { engine, api } = await connect({ flavour: 'xray' }, () => ({
      message: GetUsersStatsResponse.encode(GetUsersStatsResponse.fromPartial({ users })).finish(),
    }));
    expect(await api.onlineAddresses()).toEqual(
      new Map([
        [
          'a@svc',
          new Map([
            ['198.51.100.7', 1_767_000_000_000],
            ['[2001:db8::9]', 1_767_000_005_000],
          ]),
        ],
      ]),
    );
    expect(engine.calls[0]?.path).toBe('/xray.app.stats.command.StatsService/GetUsersStats');
    expect(GetUsersStatsRequest.decode(engine.calls[0]?.message as Uint8Array)).toEqual({ includeTraffic: false, reset: false });
    api.close();
    await engine.close();
    const older = await connect({ flavour: 'xray' }, () => ({ status: 12, text: 'unknown method GetUsersStats' }));
    expect(await older.api.onlineAddresses()).toBeNull();
  });

  // Texts as Xray-core and v2ray-core 4.x word them (gRPC UNKNOWN = 2, UNIMPLEMENTED = 12).
  it.each([
    [2, 'app/proxyman/command: proxy/vmess/inbound: User sub_0001@svc already exists.', 'exists'],
    [2, 'User sub_0001@svc not found.', 'not-found'],
    [2, 'failed to get handler: nope > app/proxyman/inbound: handler not found: nope', 'not-found'],
    [2, 'app/proxyman/command: proxy is not a UserManager', 'unsupported'],
    [2, 'failed to parse user > common/protocol: Unknown account type: v2ray.core.proxy.vless.Account', 'unsupported'],
    [12, 'unknown service xray.app.proxyman.command.HandlerService', 'unsupported'],
    [2, 'proxy/vless: failed to parse ID > invalid UUID', 'failed'],
  ])('status %i "%s" is kind %s, the text kept', async (status, text, kind) => {
    const { api } = await connect({ flavour: 'xray' }, () => ({ status, text }));
    const err = await api.addUser('vmess-in', vmessUser).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineApiError);
    expect(err).toMatchObject({ kind, grpcCode: status, message: expect.stringContaining(text) });
  });
});
