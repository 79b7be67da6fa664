import type { ServerMessage } from '@svc/proto';
import { Status } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
import { AgentSession } from './agent-session.ts';
import type { Snapshot } from './desired-state-source.ts';

const ticket = { node_id: 'nod_1', replica: 'gw_1', session: 'stm_1', serial: 'AA' };
const snap = (revision: number): Snapshot => ({ revision, config: { xray: undefined, certificates: [], userLimits: [] } });

/** Drains the session's outgoing messages into `out` until it ends. */
function drain(session: AgentSession, out: ServerMessage[]) {
  return (async () => {
    try {
      for await (const m of session.outgoing()) out.push(m);
      return 'done';
    } catch (err) {
      return err;
    }
  })();
}

describe('AgentSession: coalescing of desired states (spec 3.5)', () => {
  it('changes arriving while a compile is under way collapse into one more send of the newest revision', async () => {
    let revision = 2;
    let compiles = 0;
    let unblock: () => void = () => {};
    const source = async () => {
      compiles++;
      if (compiles === 1)
        await new Promise<void>((r) => {
          unblock = r;
        });
      return snap(revision);
    };
    const session = new AgentSession(ticket, 1, source);
    const out: ServerMessage[] = [];
    const done = drain(session, out);
    session.desiredChanged();
    await new Promise((r) => setImmediate(r));
    // Ten changes while the first compile is slow (a slow database, a slow node).
    for (let i = 0; i < 10; i++) {
      revision++;
      session.desiredChanged(revision);
    }
    unblock();
    await new Promise((r) => setTimeout(r, 20));
    session.end();
    await done;
    expect(out.map((m) => Number(m.desiredState?.revision))).toEqual([12]);
    // The first compile already read revision 12, the newest any change named: no second one.
    expect(compiles).toBe(1);
  });

  it('a change naming a revision newer than the one the running compile read compiles once more', async () => {
    let compiles = 0;
    let unblock: () => void = () => {};
    const source = async () => {
      compiles++;
      if (compiles === 1) {
        // The snapshot was taken before revision 4 was committed.
        await new Promise<void>((r) => {
          unblock = r;
        });
        return snap(3);
      }
      return snap(4);
    };
    const session = new AgentSession(ticket, 1, source);
    const out: ServerMessage[] = [];
    const done = drain(session, out);
    session.desiredChanged();
    await new Promise((r) => setImmediate(r));
    session.desiredChanged(3);
    session.desiredChanged(4);
    unblock();
    await new Promise((r) => setTimeout(r, 20));
    session.end();
    await done;
    expect(out.map((m) => Number(m.desiredState?.revision))).toEqual([3, 4]);
    expect(compiles).toBe(2);
  });

  it('a change that names no revision (a retry, an admission) always compiles', async () => {
    let compiles = 0;
    const session = new AgentSession(ticket, 7, async () => {
      compiles++;
      return snap(7);
    });
    const out: ServerMessage[] = [];
    const done = drain(session, out);
    session.desiredChanged();
    await new Promise((r) => setTimeout(r, 10));
    session.desiredChanged();
    await new Promise((r) => setTimeout(r, 10));
    session.end();
    await done;
    expect(compiles).toBe(2);
    expect(out).toEqual([]);
  });

  it('a revision the agent already has is not sent again', async () => {
    const session = new AgentSession(ticket, 5, async () => snap(5));
    const out: ServerMessage[] = [];
    const done = drain(session, out);
    session.desiredChanged();
    session.desiredChanged(5);
    await new Promise((r) => setTimeout(r, 20));
    session.end();
    await done;
    expect(out).toEqual([]);
  });

  it('queued acknowledgements and commands go out in order; end with a status throws it to the caller', async () => {
    const session = new AgentSession(ticket, 0, async () => snap(1));
    const out: ServerMessage[] = [];
    const done = drain(session, out);
    session.send({ usageAck: { reportId: 1n } });
    session.send({ usageAck: { reportId: 2n } });
    await new Promise((r) => setTimeout(r, 10));
    session.end({ code: Status.UNAUTHENTICATED, message: 'the node is disabled' });
    const ended = (await done) as { code: Status };
    expect(out.map((m) => m.usageAck?.reportId)).toEqual([1n, 2n]);
    expect(ended.code).toBe(Status.UNAUTHENTICATED);
    session.send({ usageAck: { reportId: 3n } });
    expect(out).toHaveLength(2);
  });
});
