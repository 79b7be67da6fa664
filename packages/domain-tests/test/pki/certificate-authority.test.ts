import { X509Certificate } from 'node:crypto';
import { createSealer, ensureCertificateAuthority } from '@svc/domain';
import { createDomainTestbed } from '@svc/testkit';
import { describe, expect, it } from 'vitest';

describe("the installation's certificate authority", () => {
  it('is created once, kept with its key sealed, and the same CA comes back', async () => {
    const bed = await createDomainTestbed();
    const database = bed.database;
    try {
      const secrets = createSealer(Buffer.alloc(32, 3));
      const deps = { ...bed.deps, secrets };
      const [a, b] = await Promise.all([ensureCertificateAuthority(deps), ensureCertificateAuthority(deps)]);
      expect(a.certPem).toBe(b.certPem);
      expect(await database.db.selectFrom('certificate_authority').select('id').execute()).toHaveLength(1);
      const again = await ensureCertificateAuthority(deps);
      expect(again.certPem).toBe(a.certPem);
      const row = await database.db.selectFrom('certificate_authority').selectAll().executeTakeFirstOrThrow();
      expect(row.key_enc).not.toContain('PRIVATE KEY');
      expect(secrets.open(row.key_enc)).toContain('PRIVATE KEY');
      expect(new X509Certificate(a.certPem).subject).toMatch(/^CN=svc internal CA [0-9a-f]{12}$/);
    } finally {
      await bed.close();
    }
  });
});
