import type { ColumnType } from 'kysely';

export interface InstallationTable {
  id: number;
  /** HMAC of a fixed label under the installation key: proves a replica holds the same key. */
  key_check: string;
  created_at: Date;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: ColumnType<Record<string, unknown>, string, string>;
  /** PKCS#8 private key, encrypted with the installation key (AES-256-GCM). */
  private_key_enc: string;
  created_at: Date;
  retired_at: Date | null;
}

export interface CertificateAuthorityTable {
  id: number;
  cert_pem: string;
  /** PKCS#8 private key, sealed with the installation key. */
  key_enc: string;
  not_after: Date;
  created_at: Date;
}
