import type { AgentUpgradeState } from '@svc/db';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import type { DomainContext } from '../shared/context.ts';
import { retryOnConflict } from '../shared/db-errors.ts';
import { newId } from '../shared/ids.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { dispatchAgentCommand, nodeOffline } from './agent-commands.ts';
import { agentVersionStanding, compareAgentVersions, isSemver } from './agent-version.ts';

/** The one-file agent this control plane serves (GET /agent/latest): what an upgrade installs. */
export interface AgentReleaseOffer {
  version: string;
  /** Absolute http(s) URL of the file under the control plane's public base URL. */
  url: string;
  /** SHA-256 of the file, lower-case hex. */
  sha256: string;
}

/** What the node view says of the last upgrade asked for (null: never asked). */
export interface AgentUpgradeView {
  version: string;
  state: AgentUpgradeState;
  /** The agent's words when it failed (the old agent runs on). */
  error: string | null;
  requested_at: string;
  finished_at: string | null;
}

/** How much of an agent's failure text is kept. */
export const UPGRADE_ERROR_MAX = 1000;

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Whether the node's agent is a release older than the one offered: the node page offers the
 * upgrade. Another implementation's version (not a semver) never is.
 */
export function agentUpgradeAvailable(agentVersion: string | null, release: string): boolean {
  if (agentVersion === null || !isSemver(agentVersion) || !isSemver(release)) return false;
  return compareAgentVersions(agentVersion, release) < 0;
}

/**
 * POST /nodes/{id}/upgrade-agent: sends the node's agent the release this control plane serves
 * (Command.upgrade_agent, our extension of spec 2.1 under 9.3). The agent downloads it from the
 * URL, refuses it unless the SHA-256 matches, swaps it in and restarts under its supervisor,
 * leaving the engine serving; the agent that runs afterwards says how it went (UpgradeResult,
 * recordAgentUpgradeResult). Refused, changing nothing: a node that is not online (409
 * node-offline), an agent that already runs this release or a newer one (409 agent-current),
 * an agent that is not svc-agent (409 agent-foreign). Recorded before it is sent (pending, with
 * the command id), so an answer that comes back at once finds it; put back as it was when no
 * gateway replica took the command.
 */
export async function requestAgentUpgrade(
  ctx: DomainContext,
  nodeId: string,
  release: AgentReleaseOffer,
): Promise<{ command_id: string; version: string }> {
  if (!isSemver(release.version) || !SHA256.test(release.sha256) || !/^https?:\/\/[^\s]+$/.test(release.url))
    throw new ValidationError('the agent release to offer is not valid', { release: 'version, url and sha256 are required' });
  const node = await ctx.db.selectFrom('nodes').selectAll().where('id', '=', nodeId).executeTakeFirst();
  if (!node) throw new NotFoundError('node', nodeId);
  if (node.connectivity !== 'online') throw nodeOffline(nodeId);
  const running = node.agent_version;
  if (running !== null && agentVersionStanding(running, release.version) === 'other')
    throw new ConflictError(
      `node ${nodeId} runs an agent that names itself ${running.slice(0, 64)}: not svc-agent, it cannot be upgraded from here`,
      undefined,
      {
        code: 'agent-foreign',
      },
    );
  if (running !== null && compareAgentVersions(running, release.version) >= 0)
    throw new ConflictError(`node ${nodeId} runs svc-agent ${running} already (this control plane serves ${release.version})`, undefined, {
      code: 'agent-current',
    });

  const commandId = newId('cmd');
  const previous = {
    agent_upgrade_version: node.agent_upgrade_version,
    agent_upgrade_command_id: node.agent_upgrade_command_id,
    agent_upgrade_state: node.agent_upgrade_state,
    agent_upgrade_error: node.agent_upgrade_error,
    agent_upgrade_requested_at: node.agent_upgrade_requested_at,
    agent_upgrade_finished_at: node.agent_upgrade_finished_at,
  };
  const now = ctx.clock.now();
  await unitOfWork(ctx, async (uow) => {
    await uow.db
      .updateTable('nodes')
      .set({
        agent_upgrade_version: release.version,
        agent_upgrade_command_id: commandId,
        agent_upgrade_state: 'pending',
        agent_upgrade_error: null,
        agent_upgrade_requested_at: now,
        agent_upgrade_finished_at: null,
      })
      .where('id', '=', nodeId)
      .execute();
    uow.nodeViewsChanged([nodeId]);
  });
  try {
    const { close } = await dispatchAgentCommand(
      ctx,
      nodeId,
      { kind: 'upgrade_agent', version: release.version, url: release.url, sha256: release.sha256 },
      { commandId },
    );
    await close();
  } catch (err) {
    await unitOfWork(ctx, async (uow) => {
      await uow.db.updateTable('nodes').set(previous).where('id', '=', nodeId).where('agent_upgrade_command_id', '=', commandId).execute();
      uow.nodeViewsChanged([nodeId]);
    });
    throw err;
  }
  await unitOfWork(ctx, async (uow) =>
    uow.audit({
      action: 'node.agent_upgrade_requested',
      entity_type: 'node',
      entity_id: nodeId,
      details: { command_id: commandId, from: running, to: release.version },
    }),
  );
  return { command_id: commandId, version: release.version };
}

/**
 * UpgradeResult from a node's agent: the pending upgrade with that command id ends, succeeded or
 * failed with the agent's words (its first UPGRADE_ERROR_MAX characters). A failure raises
 * node.agent_upgrade_failed. An answer to another command, to an upgrade already ended, or from
 * another node changes nothing (the agent sends its result again on every stream until it is
 * written, so repeats are expected). Returns the state written, or null.
 */
export async function recordAgentUpgradeResult(
  deps: UnitOfWorkDeps,
  nodeId: string,
  r: { commandId: string; success: boolean; error: string; agentVersion: string },
): Promise<AgentUpgradeState | null> {
  if (r.commandId === '' || r.commandId.length > 64) return null;
  const error = r.success ? null : upgradeErrorText(r.error);
  return retryOnConflict(() =>
    unitOfWork(deps, async (uow) => {
      const now = deps.clock.now();
      const row = await uow.db
        .updateTable('nodes')
        .set({ agent_upgrade_state: r.success ? 'succeeded' : 'failed', agent_upgrade_error: error, agent_upgrade_finished_at: now })
        .where('id', '=', nodeId)
        .where('agent_upgrade_command_id', '=', r.commandId)
        .where('agent_upgrade_state', '=', 'pending')
        .returning(['name', 'agent_upgrade_version', 'agent_version'])
        .executeTakeFirst();
      if (!row) return null;
      uow.nodeViewsChanged([nodeId]);
      if (!r.success)
        await recordEvent(
          uow,
          {
            type: 'node.agent_upgrade_failed',
            payload: {
              node_id: nodeId,
              name: row.name,
              version: row.agent_upgrade_version ?? '',
              agent_version: r.agentVersion.trim().slice(0, 64) || row.agent_version || '',
              error: error ?? '',
            },
          },
          now,
        );
      return r.success ? 'succeeded' : 'failed';
    }),
  );
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the agent's words are shown on one line
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

export function upgradeErrorText(error: string): string {
  const t = error.replace(CONTROL, ' ').trim();
  if (t === '') return 'failed without an error text';
  return t.length > UPGRADE_ERROR_MAX ? `${t.slice(0, UPGRADE_ERROR_MAX - 1)}…` : t;
}

export function agentUpgradeView(r: {
  agent_upgrade_version: string | null;
  agent_upgrade_state: AgentUpgradeState | null;
  agent_upgrade_error: string | null;
  agent_upgrade_requested_at: Date | null;
  agent_upgrade_finished_at: Date | null;
}): AgentUpgradeView | null {
  if (r.agent_upgrade_version === null || r.agent_upgrade_state === null || r.agent_upgrade_requested_at === null) return null;
  return {
    version: r.agent_upgrade_version,
    state: r.agent_upgrade_state,
    error: r.agent_upgrade_error,
    requested_at: r.agent_upgrade_requested_at.toISOString(),
    finished_at: r.agent_upgrade_finished_at?.toISOString() ?? null,
  };
}
