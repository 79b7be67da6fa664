import { randomBytes } from 'node:crypto';
import {
  AGENT_RELEASE,
  type DomainDeps,
  enrollNode,
  ensureCertificateAuthority,
  issueEnrollToken,
  type LoadedCa,
  openAgentStreams,
  verifyNodeCertificate,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { makeCsr } from '@svc/testkit/agent-simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal } from '../support.ts';

/**
 * Spec 4.1, 7.1, 9.3, 9.4 (docs/agent.md, "Versions"): every agent that speaks
 * svc.controlplane.v1 is served whatever version it names; token and certificate checks come
 * first, always; an outdated agent is flagged and raises node.agent_outdated; the operator's
 * floor (grpc.min_agent_version) is opt-in and applies only after authentication.
 */

const [major, minor] = AGENT_RELEASE.split('.').map(Number) as [number, number];
const OUTDATED = '0.0.0-acceptance';

interface Bed {
  bed: DomainTestbed;
  deps: DomainDeps;
  ca: LoadedCa;
}

async function open(env: Record<string, string> = {}): Promise<Bed> {
  const bed = await createDomainTestbed({ env });
  const ca = await ensureCertificateAuthority(bed.deps);
  return { bed, deps: bed.deps, ca };
}

const enroll = async (b: Bed, token: string, agent_version: string) =>
  enrollNode(b.deps, b.ca, { token, csr_pem: (await makeCsr()).csrPem, hostname: 'h', agent_version }, { ip: '192.0.2.1' });

const tokenFor = async (b: Bed) => {
  const node = await fixtures(b.bed.ctx()).node();
  return { node, token: (await issueEnrollToken(b.bed.ctx(), node.id)).token };
};

const bogusToken = () => randomBytes(32).toString('base64url');

const nodeRow = (b: Bed, id: string) => b.deps.db.selectFrom('nodes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

const outdatedEvents = async (b: Bed, nodeId: string) =>
  (await b.deps.db.selectFrom('events').selectAll().where('type', '=', 'node.agent_outdated').orderBy('id').execute())
    .map((e) => (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload) as Record<string, unknown>)
    .filter((p) => p.node_id === nodeId);

const hello = (agent_version: string) => ({
  hostname: 'h',
  os: 'linux',
  arch: 'x64',
  agent_version,
  xray_version: '4.34.0',
  applied_revision: 0,
});

const openStream = async (b: Bed, certPem: string, agent_version: string) => {
  const identity = verifyNodeCertificate(b.ca, certPem, b.bed.clock.now());
  if (!identity) throw new Error('the certificate does not verify');
  const [r] = await openAgentStreams(b.deps, [
    {
      identity,
      ticket: { node_id: identity.node_id, replica: 'r1', session: randomBytes(6).toString('hex'), serial: identity.serial },
      hello: hello(agent_version),
    },
  ]);
  return r;
};

describe('without a floor (the default), the agent version refuses nothing', () => {
  let b: Bed;
  beforeAll(async () => {
    b = await open();
  });
  afterAll(() => b.bed.close());

  it('an agent naming itself 0.0.0-acceptance enrolls and its stream is admitted', async () => {
    const { node, token } = await tokenFor(b);
    const enrolled = await enroll(b, token, OUTDATED);
    expect(enrolled.node_id).toBe(node.id);
    expect(await openStream(b, enrolled.client_cert_pem, OUTDATED)).toMatchObject({ desired_revision: expect.any(Number) });
    expect(await nodeRow(b, node.id)).toMatchObject({ agent_version: OUTDATED, connectivity: 'online' });
  });

  it('an invalid token is UNAUTHENTICATED whatever version the agent names', async () => {
    for (const v of [OUTDATED, '0.0.1', AGENT_RELEASE, 'py-1.0', `${major + 1}.0.0`]) {
      const err = await refusal(enroll(b, bogusToken(), v));
      expect(err.type, v).toBe('unauthenticated');
    }
  });

  it('an outdated agent raises node.agent_outdated once per version it reports, at enroll and at a stream that reports a new one', async () => {
    const { node, token } = await tokenFor(b);
    const enrolled = await enroll(b, token, OUTDATED);
    expect(await outdatedEvents(b, node.id)).toEqual([
      { node_id: node.id, name: node.name, agent_version: OUTDATED, previous_agent_version: null, release: AGENT_RELEASE },
    ]);
    // The same version again on every reconnect: no second event.
    await openStream(b, enrolled.client_cert_pem, OUTDATED);
    await openStream(b, enrolled.client_cert_pem, OUTDATED);
    expect(await outdatedEvents(b, node.id)).toHaveLength(1);
    // Upgraded to the current release: nothing to say; then a downgrade to the previous minor is said.
    await openStream(b, enrolled.client_cert_pem, AGENT_RELEASE);
    const previous = `${major}.${minor - 1}.4`;
    await openStream(b, enrolled.client_cert_pem, previous);
    const events = await outdatedEvents(b, node.id);
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ agent_version: previous, previous_agent_version: AGENT_RELEASE });
  });

  it('a current, newer or non-semver agent raises no event', async () => {
    for (const v of [AGENT_RELEASE, `${major}.${minor + 1}.0`, 'py-1.0']) {
      const { node, token } = await tokenFor(b);
      await enroll(b, token, v);
      expect(await outdatedEvents(b, node.id), v).toEqual([]);
    }
  });
});

describe('grpc.min_agent_version (opt-in): a floor applied only after authentication', () => {
  let b: Bed;
  const FLOOR = `${major}.${minor}.0`;
  const BELOW = `${major}.${minor - 1}.9`;
  beforeAll(async () => {
    b = await open({ SVC_GRPC_MIN_AGENT_VERSION: FLOOR });
  });
  afterAll(() => b.bed.close());

  it('a bogus token below the floor is UNAUTHENTICATED, not FAILED_PRECONDITION', async () => {
    expect((await refusal(enroll(b, bogusToken(), BELOW))).type).toBe('unauthenticated');
    expect((await refusal(enroll(b, bogusToken(), '0.0.0-x'))).type).toBe('unauthenticated');
  });

  it('a valid token below the floor is refused as unprocessable, writes nothing, and stays good for the upgraded agent', async () => {
    const { node, token } = await tokenFor(b);
    const err = await refusal(enroll(b, token, BELOW));
    expect(err.type).toBe('unprocessable');
    expect(err.message).toBe(
      `agent version ${BELOW} is below this control plane's minimum ${FLOOR} (grpc.min_agent_version): upgrade the agent on this node`,
    );
    expect(await nodeRow(b, node.id)).toMatchObject({ agent_version: null, cert_serial: null });
    expect((await enroll(b, token, FLOOR)).node_id).toBe(node.id);
  });

  it('a pre-release of the floor is below it; a version that is not a semver is not svc-agent and passes', async () => {
    const a = await tokenFor(b);
    expect((await refusal(enroll(b, a.token, `${FLOOR}-rc.1`))).type).toBe('unprocessable');
    const other = await tokenFor(b);
    expect((await enroll(b, other.token, 'py-1.0')).node_id).toBe(other.node.id);
  });

  it("Sync: the node's current certificate below the floor is refused as unprocessable and writes nothing; a retired certificate is UNAUTHENTICATED", async () => {
    const { node, token } = await tokenFor(b);
    const first = await enroll(b, token, FLOOR);
    const refused = await openStream(b, first.client_cert_pem, BELOW);
    expect(refused).toMatchObject({ type: 'unprocessable' });
    expect(await nodeRow(b, node.id)).toMatchObject({ agent_version: FLOOR, connectivity: 'offline' });
    expect(await openStream(b, first.client_cert_pem, FLOOR)).toMatchObject({ desired_revision: expect.any(Number) });

    // Enrolled again: the first certificate is no longer the node's identity.
    const again = (await issueEnrollToken(b.bed.ctx(), node.id)).token;
    await enroll(b, again, FLOOR);
    expect(await openStream(b, first.client_cert_pem, BELOW)).toMatchObject({ type: 'unauthenticated' });
  });
});
