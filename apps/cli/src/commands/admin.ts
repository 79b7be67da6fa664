import type { Config } from '@svc/config';
import { createAdmin, resetAdminPassword, SYSTEM, withActor } from '@svc/domain';
import { createRuntime } from '@svc/runtime';
import { readPassword } from '../password-input.ts';

const CLI_ACTOR = { ...SYSTEM, userAgent: 'svc-cli' };

/** Works directly on the data store (spec 5.5): no HTTP, no running server needed. */
export async function adminCreate(config: Config, input: { email: string; role: 'owner' | 'admin' | 'viewer'; passwordStdin: boolean }) {
  const password = await readPassword(input.passwordStdin);
  const rt = await createRuntime(config);
  try {
    const admin = await createAdmin(withActor(rt.deps, CLI_ACTOR), { email: input.email, password, role: input.role });
    process.stdout.write(`created ${admin.role} ${admin.email} (${admin.id})\n`);
  } finally {
    await rt.close();
  }
}

export async function adminResetPassword(config: Config, input: { email: string; passwordStdin: boolean }) {
  const password = await readPassword(input.passwordStdin);
  const rt = await createRuntime(config);
  try {
    const admin = await resetAdminPassword(withActor(rt.deps, CLI_ACTOR), { email: input.email, password });
    process.stdout.write(`password of ${admin.email} changed; every session of this admin is ended\n`);
  } finally {
    await rt.close();
  }
}
