import {
  beginBootstrap,
  CreateAdminInput,
  completeSetup,
  createAdmin,
  type DomainDeps,
  parseInput,
  SetupInput,
  SYSTEM,
  withActor,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// The end of bootstrap mode is logged once, by whichever surface made the first admin
// (docs/observability.md): an operator who sent the setup token sees that it worked.
let bed: DomainTestbed;
let deps: DomainDeps;
let logs: Array<Record<string, any>>;
beforeEach(async () => {
  bed = await createDomainTestbed({ env: { SVC_LOG_LEVEL: 'info' } });
  deps = bed.deps;
  logs = bed.logs;
});
afterEach(() => bed.close());

const PASSWORD = 'owner-password-1';
const completed = () => logs.filter((l) => String(l.msg).startsWith('setup completed'));

describe('setup completion is logged (bootstrap mode is over)', () => {
  it('POST /setup: "setup completed" at info with the admin id, email, role and the operator\'s address; never the password or the token', async () => {
    const token = (await beginBootstrap(deps)) as string;
    const owner = await completeSetup(deps, parseInput(SetupInput, { token, email: 'owner@example.com', password: PASSWORD }), {
      ip: '192.0.2.10',
    });
    expect(completed()).toEqual([
      expect.objectContaining({
        level: 30,
        admin_id: owner.id,
        email: 'owner@example.com',
        role: 'owner',
        via: 'api',
        ip: '192.0.2.10',
        msg: 'setup completed: owner@example.com is the first admin (owner, POST /api/v1/setup); bootstrap mode is over',
      }),
    ]);
    expect(JSON.stringify(logs)).not.toContain(PASSWORD);
    expect(JSON.stringify(logs)).not.toContain(token);
  });

  it('a refused setup token logs no completion', async () => {
    await beginBootstrap(deps);
    await completeSetup(deps, parseInput(SetupInput, { token: 'not-the-token', email: 'o@example.com', password: PASSWORD }), {}).catch(
      () => undefined,
    );
    expect(completed()).toEqual([]);
  });

  it('svc admin create: the first admin logs "setup completed" (via cli); the next admins do not', async () => {
    const shell = withActor(deps, { ...SYSTEM, userAgent: 'svc-cli' });
    const first = await createAdmin(shell, parseInput(CreateAdminInput, { email: 'first@example.com', password: PASSWORD, role: 'owner' }));
    await createAdmin(shell, parseInput(CreateAdminInput, { email: 'second@example.com', password: PASSWORD, role: 'admin' }));
    expect(completed()).toEqual([
      expect.objectContaining({
        admin_id: first.id,
        email: 'first@example.com',
        role: 'owner',
        via: 'cli',
        msg: 'setup completed: first@example.com is the first admin (owner, svc admin create); bootstrap mode is over',
      }),
    ]);
    expect(JSON.stringify(logs)).not.toContain(PASSWORD);
  });
});
