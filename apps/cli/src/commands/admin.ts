import type { Config } from '@svc/config';
import type { AdminRole as AdminRoleName } from '@svc/db';
import {
  CreateAdminInput,
  createAdmin,
  isDomainError,
  parseInput,
  ResetAdminPasswordInput,
  resetAdminPassword,
  SYSTEM,
  ValidationError,
  withActor,
} from '@svc/domain';
import { createRuntime } from '@svc/runtime';
import { readPassword } from '../password-input.ts';

const CLI_ACTOR = { ...SYSTEM, userAgent: 'svc-cli' };

/** The flag each field of the input came from (the password comes from stdin or the prompt). */
const FLAG: Record<string, string> = { email: '--email', role: '--role' };

/**
 * The input parsed by the schema the admin API parses the same request with, before anything
 * opens the data store: the shell cannot create an admin the API would refuse. A refusal names
 * each field as the operator gave it (main prints the reasons and exits non-zero).
 */
function parseArgsWith<S extends Parameters<typeof parseInput>[0]>(
  schema: S,
  input: unknown,
  refused: string,
): ReturnType<typeof parseInput<S>> {
  try {
    return parseInput(schema, input);
  } catch (err) {
    if (!isDomainError(err) || err.type !== 'validation') throw err;
    const errors = Object.fromEntries(Object.entries(err.errors ?? {}).map(([field, reason]) => [FLAG[field] ?? field, reason]));
    throw new ValidationError(refused, errors);
  }
}

/** Works directly on the data store (spec 5.5): no HTTP, no running server needed. */
export async function adminCreate(config: Config, input: { email: string; role: AdminRoleName; passwordStdin: boolean }) {
  const password = await readPassword(input.passwordStdin);
  const admin = parseArgsWith(CreateAdminInput, { email: input.email, password, role: input.role }, 'the admin was not created');
  const rt = await createRuntime(config);
  try {
    const created = await createAdmin(withActor(rt.deps, CLI_ACTOR), admin);
    process.stdout.write(`created ${created.role} ${created.email} (${created.id})\n`);
  } finally {
    await rt.close();
  }
}

export async function adminResetPassword(config: Config, input: { email: string; passwordStdin: boolean }) {
  const password = await readPassword(input.passwordStdin);
  const reset = parseArgsWith(ResetAdminPasswordInput, { email: input.email, password }, 'the password was not changed');
  const rt = await createRuntime(config);
  try {
    const admin = await resetAdminPassword(withActor(rt.deps, CLI_ACTOR), reset);
    process.stdout.write(`password of ${admin.email} changed; every session of this admin is ended\n`);
  } finally {
    await rt.close();
  }
}
