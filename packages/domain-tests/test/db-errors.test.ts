import { isUniqueViolation } from '@svc/domain';
import { createTestDatabase } from '@svc/testkit';
import { describe, expect, it } from 'vitest';

describe('a unique violation is recognised the same way on PGlite and PostgreSQL', () => {
  it('names the constraint the duplicate email broke', async () => {
    const db = await createTestDatabase();
    try {
      const row = {
        id: 'adm_1',
        email: 'a@example.com',
        password_hash: null,
        role: 'owner' as const,
        created_at: new Date(),
        updated_at: new Date(),
        last_login_at: null,
      };
      await db.db.insertInto('admins').values(row).execute();
      const err = await db.db
        .insertInto('admins')
        .values({ ...row, id: 'adm_2' })
        .execute()
        .catch((e: unknown) => e);
      expect(isUniqueViolation(err, 'admins_email_key')).toBe(true);
      expect(isUniqueViolation(err, 'some_other_key')).toBe(false);
    } finally {
      await db.destroy();
    }
  });
});
