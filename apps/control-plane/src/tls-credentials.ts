import { constants } from 'node:crypto';
import type { SecureContextOptions } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { TlsSessionResumption } from '@svc/domain';

export interface ServerIdentity {
  /** The server certificate followed by the CA (PEM). */
  certificate: Buffer;
  privateKey: Buffer;
}

/**
 * The gateway's TLS layer, as grpc-js server credentials (its public abstract ServerCredentials):
 *
 * - a client certificate is *requested*, never required, so Enroll (none) and Sync (mTLS) share
 *   one port; the identity interceptor verifies it against our CA;
 * - TLS 1.3 session tickets under keys every replica derives from the installation key
 *   (gatewayTlsResumption), so an agent resumes on any replica and after a restart; or, with
 *   resumption off, no tickets at all;
 * - setIdentity rotates the server certificate without a restart (new connections see it).
 *
 * grpc-js builds its HTTP/2 server from the constructor options and these context options, and
 * hands every later update to `setSecureContext`: the ticket keys, session id context and
 * lifetime are context options, so they survive a certificate rotation. (grpc-js's
 * certificate-provider credentials, used before, pass on only ca/cert/key: Node then takes
 * random ticket keys per process and a session id context hashed from process.argv, and no
 * ticket survives a restart or crosses to another replica or to `svc start`.)
 */
export class GatewayServerCredentials extends grpc.ServerCredentials {
  constructor(
    private readonly caCertPem: Buffer,
    private identity: ServerIdentity,
    private readonly resumption: TlsSessionResumption | null,
  ) {
    super({ requestCert: true, rejectUnauthorized: false });
    this.updateSecureContextOptions(this.contextOptions());
  }

  setIdentity(identity: ServerIdentity): void {
    this.identity = identity;
    this.updateSecureContextOptions(this.contextOptions());
  }

  _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }

  private contextOptions(): SecureContextOptions {
    const base = { ca: this.caCertPem, cert: this.identity.certificate, key: this.identity.privateKey };
    const r = this.resumption;
    if (!r) return { ...base, secureOptions: constants.SSL_OP_NO_TICKET };
    return { ...base, ticketKeys: r.ticketKeys, sessionIdContext: r.sessionIdContext, sessionTimeout: r.sessionTimeout };
  }
}
