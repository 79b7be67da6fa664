import type { Socket } from 'node:net';
import { checkServerIdentity, connect, createSecureContext, type SecureContext, type TLSSocket } from 'node:tls';
import { CallCredentials, ChannelCredentials, type ChannelOptions, experimental } from '@grpc/grpc-js';

export interface ResumableCredentialsOptions {
  caCertPem: string | Buffer;
  keyPem: string | Buffer;
  certPem: string | Buffer;
  /** Offer the last TLS session on the next connection (default true; false: full handshakes, to measure). */
  resume?: boolean;
  /** Told after every handshake whether it resumed a session. */
  onHandshake?: (resumed: boolean) => void;
}

/** grpc-js's own parse of a target URI (uri-parser.ts parseUri, not exported). */
const URI = /^(?:([A-Za-z0-9+.-]+):)?(?:\/\/([^/]*)\/)?(.+)$/;

/**
 * mTLS channel credentials that resume the agent's last TLS session (issue 17.3). After a
 * gateway restart the whole fleet reconnects at once; a resumed TLS 1.3 handshake skips the
 * certificate signatures and chain checks on both sides. The gateway's ticket keys come from
 * the installation key, so a ticket resumes on any replica and after a restart; a ticket the
 * gateway no longer accepts (another installation, resumption off, below its minimum version) costs nothing but
 * a full handshake.
 *
 * grpc-js keeps tls.connect to itself; its public ChannelCredentials class lets a subclass make
 * the connection instead (_createSecureConnector, as its own credentials do), which is where
 * the session is offered and the new ticket kept. Everything else is what createSsl does: the
 * pinned CA alone, the server name checked (or grpc.ssl_target_name_override), ALPN h2.
 *
 * One instance per identity: a session carries the client certificate of the handshake that
 * began it, so a renewed certificate must start with a full handshake (the gateway retires the
 * old one once the new one connects). The session lives in memory only: it is the key of the
 * resumed connection, and a restarted agent does one full handshake.
 *
 * Tickets resume until the lifetime the gateway set (7 days by default), counted from the full
 * handshake that issued them; a resumed handshake brings no new one (OpenSSL). So
 * `refreshTicket` takes a fresh ticket with one full handshake on a side connection; the agent
 * calls it when its ticket gets old, so a gateway restart after weeks of uptime still finds
 * every agent with a ticket that resumes.
 */
export class ResumableChannelCredentials extends ChannelCredentials {
  private readonly context: SecureContext;
  private session: Buffer | null = null;
  private sessionAt = 0;
  /** Where the last connection went (the side connection of refreshTicket goes there too). */
  private last: { address: string; port: number; servername: string; check: (host: string, cert: any) => Error | undefined } | null = null;
  readonly handshakes = { full: 0, resumed: 0 };
  /** Offer the last session on the next connections (false: full handshakes, to measure). */
  resume: boolean;

  constructor(private readonly opts: ResumableCredentialsOptions) {
    super();
    this.resume = opts.resume !== false;
    this.context = createSecureContext({ ca: opts.caCertPem, key: opts.keyPem, cert: opts.certPem });
  }

  /** Milliseconds since the ticket held was issued; Infinity without one. */
  ticketAgeMs(now = Date.now()): number {
    return this.session ? now - this.sessionAt : Number.POSITIVE_INFINITY;
  }

  _isSecure(): boolean {
    return true;
  }

  _equals(other: ChannelCredentials): boolean {
    return other === this;
  }

  _createSecureConnector(
    channelTarget: experimental.GrpcUri,
    options: ChannelOptions,
    callCredentials?: CallCredentials,
  ): experimental.SecureConnector {
    // The name to check: the target's host (behind an HTTP CONNECT proxy, the real target's), or the override.
    const proxied = options['grpc.http_connect_target'];
    const m = typeof proxied === 'string' ? URI.exec(proxied) : null;
    const path = m?.[3] ?? channelTarget.path;
    const host = experimental.splitHostPort(path)?.host ?? path;
    const override = options['grpc.ssl_target_name_override'];
    const servername = typeof override === 'string' && override ? override : host;
    const check = (_host: string, cert: any) => checkServerIdentity(servername, cert);
    const calls = callCredentials ?? CallCredentials.createEmpty();
    return {
      connect: (socket: Socket) =>
        this.handshake({ socket, servername, check }).then((tls) => {
          this.last = { address: socket.remoteAddress ?? host, port: socket.remotePort ?? 0, servername, check };
          return { socket: tls, secure: true };
        }),
      waitForReady: () => Promise.resolve(),
      getCallCredentials: () => calls,
      destroy: () => {},
    };
  }

  /**
   * A full handshake on a side connection to where the last connection went, for a fresh
   * ticket; closed as soon as the ticket arrives. False when it could not be done (never
   * connected, the gateway away): the ticket held stays.
   */
  async refreshTicket(timeoutMs = 10_000): Promise<boolean> {
    const last = this.last;
    if (!last) return false;
    const got = await new Promise<boolean>((resolve) => {
      const socket = connect({
        host: last.address,
        port: last.port,
        servername: last.servername,
        secureContext: this.context,
        ALPNProtocols: ['h2'],
        checkServerIdentity: last.check,
      });
      const done = (ok: boolean) => {
        clearTimeout(timer);
        socket.destroy();
        resolve(ok);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      socket.on('session', (s: Buffer) => {
        this.keep(s);
        done(true);
      });
      socket.on('error', () => done(false));
      socket.on('close', () => done(false));
    });
    return got;
  }

  private handshake(o: { socket: Socket; servername: string; check: (host: string, cert: any) => Error | undefined }): Promise<TLSSocket> {
    const offer = this.resume ? (this.session ?? undefined) : undefined;
    return new Promise((resolve, reject) => {
      const tls = connect(
        {
          socket: o.socket,
          secureContext: this.context,
          servername: o.servername,
          checkServerIdentity: o.check,
          ALPNProtocols: ['h2'],
          ...(offer ? { session: offer } : {}),
        },
        () => {
          tls.removeListener('error', reject);
          tls.removeListener('close', closed);
          if (!tls.authorized) {
            reject(tls.authorizationError);
            tls.destroy();
            return;
          }
          const resumed = tls.isSessionReused();
          if (resumed) this.handshakes.resumed++;
          else this.handshakes.full++;
          this.opts.onHandshake?.(resumed);
          resolve(tls);
        },
      );
      // TLS 1.3 tickets arrive after the handshake (one or two); the newest is kept. A resumed
      // handshake brings none, so the ticket (and its age) stays that of the full handshake.
      tls.on('session', (s: Buffer) => this.keep(s));
      const closed = () => reject(new Error('the connection closed during the TLS handshake'));
      tls.once('error', reject);
      tls.once('close', closed);
    });
  }

  private keep(session: Buffer): void {
    this.session = session;
    this.sessionAt = Date.now();
  }
}
