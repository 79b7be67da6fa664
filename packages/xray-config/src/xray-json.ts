import { Protocol } from '@svc/proto';

/** The rendered configuration's shape, the options of rendering, and the error for a NodeConfig Xray would refuse. */

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The rendered configuration; a plain JSON-serializable object. */
export interface XrayJson {
  [key: string]: Json | undefined;
  log: JsonObject;
  api?: JsonObject;
  stats?: JsonObject;
  policy?: JsonObject;
  inbounds: JsonObject[];
  outbounds: JsonObject[];
  routing: JsonObject;
}

export type XrayLogLevel = 'debug' | 'info' | 'warning' | 'error' | 'none';

export interface CertificateFiles {
  /** PEM certificate (full chain) file. */
  certFile: string;
  /** PEM private key file. */
  keyFile: string;
}

export interface RenderOptions {
  /** Where the agent wrote the PEM files of NodeConfig.certificates[] with this id. */
  certificatePaths: (certificateId: string) => CertificateFiles;
  /** `log.loglevel`; default `warning`. */
  logLevel?: XrayLogLevel;
  /**
   * When set: per-user traffic statistics (`stats`, `policy` level 0 with user uplink and
   * downlink counters) and the gRPC API (`StatsService`, `HandlerService`) on an `api`
   * dokodemo-door inbound at 127.0.0.1:apiPort, routed to the `api` outbound Xray creates.
   */
  apiPort?: number;
}

/** Tag of the API inbound and of the outbound Xray creates for the API. */
export const API_TAG = 'api';
/** Listen address of the API inbound: loopback only. */
export const API_LISTEN = '127.0.0.1';

/** A NodeConfig that cannot be turned into a working Xray configuration; `path` locates the part. */
export class XrayConfigError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(`${path}: ${message}`);
    this.name = 'XrayConfigError';
  }
}

/** Xray's protocol names. */
export const PROTOCOL_NAME: Partial<Record<Protocol, string>> = {
  [Protocol.VLESS]: 'vless',
  [Protocol.VMESS]: 'vmess',
  [Protocol.TROJAN]: 'trojan',
  [Protocol.SHADOWSOCKS]: 'shadowsocks',
  [Protocol.FREEDOM]: 'freedom',
  [Protocol.BLACKHOLE]: 'blackhole',
};
