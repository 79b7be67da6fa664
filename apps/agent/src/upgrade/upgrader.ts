import { readdir } from 'node:fs/promises';
import type { AgentMessage, UpgradeAgent } from '@svc/proto';
import type { Logger } from 'pino';
import { clearPending, HELD_AFTER_MS, HOLD_WITHIN_MS, rollBack, type UpgradeOnStart, writePending } from './pending-upgrade.ts';
import { currentRelease, fetchRelease, pointCurrentAt, pruneReleases } from './release-dir.ts';

export interface UpgraderDeps {
  stateDir: string;
  /** SVC_AGENT_RELEASE_DIR (install.sh's /opt/svc-agent); null: not installed by install.sh. */
  releaseDir: string | null;
  version: string;
  log: Logger;
  send(m: AgentMessage): boolean;
  connected(): boolean;
  /** Hand the engine over and exit with `code`: the supervisor starts current.mjs again. */
  restart(code: number, why: string): void;
}

/**
 * The agent's side of Command.upgrade_agent (docs/agent.md, "Upgrades"): fetch and check the
 * release (release-dir.ts), record the pending upgrade, swap current.mjs, hand the engine over
 * and exit for the supervisor to start the new release. The new release proves itself by holding
 * a stream for HELD_AFTER_MS, then reports success; one that does not within HOLD_WITHIN_MS (or
 * stops MAX_STARTS times first) puts the old release back, which reports the failure. Every
 * result goes out once a stream has stayed up, and is forgotten only then.
 */
export class Upgrader {
  private busy = false;
  private heldTimer: NodeJS.Timeout | null = null;
  private watchdog: NodeJS.Timeout | null = null;

  constructor(
    private readonly d: UpgraderDeps,
    private state: UpgradeOnStart,
  ) {
    if (state.kind === 'trying') {
      d.log.info({ from: state.pending.from_version, start: state.pending.starts }, 'upgraded: proving this release by holding a stream');
      this.watchdog = setTimeout(() => void this.giveUp(), HOLD_WITHIN_MS);
      this.watchdog.unref();
    }
  }

  /** A stream opened: once it has held, the pending result goes out. */
  opened(): void {
    if (this.state.kind !== 'trying' && this.state.kind !== 'failed') return;
    this.closed();
    this.heldTimer = setTimeout(() => void this.held(), HELD_AFTER_MS);
    this.heldTimer.unref();
  }

  closed(): void {
    if (this.heldTimer) clearTimeout(this.heldTimer);
    this.heldTimer = null;
  }

  stop(): void {
    this.closed();
    if (this.watchdog) clearTimeout(this.watchdog);
  }

  private async held(): Promise<void> {
    const s = this.state;
    if ((s.kind !== 'trying' && s.kind !== 'failed') || !this.d.connected()) return;
    const success = s.kind === 'trying';
    const error = s.kind === 'failed' ? s.error : '';
    if (!this.result(s.pending.command_id, success, error)) return;
    this.state = { kind: 'none' };
    if (this.watchdog) clearTimeout(this.watchdog);
    await clearPending(this.d.stateDir);
    if (success) {
      this.d.log.info({ from: s.pending.from_version, to: this.d.version }, 'upgrade held: this release stays');
      if (this.d.releaseDir)
        await pruneReleases(this.d.releaseDir, [s.pending.to_file, s.pending.from_file], await readdir(this.d.releaseDir)).catch(() => {});
    } else this.d.log.warn({ error }, 'the upgrade did not happen; reported');
  }

  private async giveUp(): Promise<void> {
    const s = this.state;
    if (s.kind !== 'trying' || !this.d.releaseDir) return;
    const reason = `svc-agent ${this.d.version} did not hold a stream to the control plane within ${HOLD_WITHIN_MS / 60_000} minutes; svc-agent ${s.pending.from_version} was put back`;
    this.d.log.error({ reason }, 'upgrade rolled back');
    await rollBack(this.d.stateDir, this.d.releaseDir, s.pending, reason);
    this.d.restart(1, 'rolled back');
  }

  private result(commandId: string, success: boolean, error: string): boolean {
    return this.d.send({ upgradeResult: { commandId, success, error, agentVersion: this.d.version } });
  }

  /** Command.upgrade_agent. */
  async handle(commandId: string, cmd: UpgradeAgent): Promise<void> {
    const fail = (error: string) => {
      this.d.log.warn({ command_id: commandId, version: cmd.version, error }, 'upgrade refused; this agent runs on');
      this.result(commandId, false, error);
    };
    if (cmd.version === this.d.version) {
      this.result(commandId, true, '');
      return;
    }
    if (this.busy || this.state.kind === 'trying') return fail('an upgrade is under way already');
    if (!this.d.releaseDir)
      return fail(
        'this agent was not installed by install.sh (SVC_AGENT_RELEASE_DIR is not set): upgrade it the way it was installed (run the install command again, or pull the new image)',
      );
    const releaseDir = this.d.releaseDir;
    this.busy = true;
    try {
      const from = await currentRelease(releaseDir);
      if (!from) return fail(`${releaseDir} has no current.mjs: run the install command again`);
      this.d.log.info({ command_id: commandId, version: cmd.version, url: cmd.url }, 'upgrade asked: fetching the release');
      let file: string;
      try {
        file = await fetchRelease(releaseDir, cmd, process.execPath, (step) => this.d.log.info({ version: cmd.version, step }, 'upgrade'));
      } catch (err) {
        return fail((err as Error).message);
      }
      await writePending(this.d.stateDir, {
        command_id: commandId,
        from_version: this.d.version,
        from_file: from,
        to_version: cmd.version,
        to_file: file,
        starts: 0,
        requested_at: new Date().toISOString(),
      });
      try {
        await pointCurrentAt(releaseDir, file);
      } catch (err) {
        await clearPending(this.d.stateDir);
        return fail(`could not switch to the new release: ${(err as Error).message}`);
      }
      this.d.log.info({ to: cmd.version, file }, 'release verified and swapped in; handing the engine over to it');
      this.d.restart(0, `upgrade to ${cmd.version}`);
    } finally {
      this.busy = false;
    }
  }
}
