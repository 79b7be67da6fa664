import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DesiredState, InboundUser, NodeConfig } from '@svc/proto';
import { renderXrayConfig, XrayConfigError } from '@svc/xray-config';
import type { Logger } from 'pino';
import { engineTest } from '../engine/engine-cli.ts';
import type { EngineProcess } from '../engine/engine-process.ts';
import { engineView, saveEngineWithheld } from '../entitlements/engine-view.ts';
import { writeFileAtomic } from '../state-files.ts';
import { saveApplied } from './applied-state.ts';
import { CertificateLayoutError, layOutCertificates, pruneCertificates } from './certificate-files.ts';
import { type InboundUserChange, planChange } from './change-plan.ts';

/**
 * Applies desired states exactly as given (spec 2.1 rules): certificates laid out as files, the
 * engine JSON rendered by @svc/xray-config, and then the cheapest safe way:
 * - nothing changed: only the revision is recorded;
 * - only users of existing inbounds changed: HandlerService add/remove, no restart; removed
 *   users' open connections are ended (the `cut` hook); if the engine cannot alter an inbound's
 *   users (v2ray's Shadowsocks) the change falls back to a restart;
 * - anything else: the new file is checked by the engine (`-test`) before it replaces the
 *   running one; a refused file leaves the old engine running, and the error text goes into the
 *   ApplyResult. A new file that passed the test but does not start is rolled back.
 * Traffic counted by the engine is collected before anything that could lose it (a restart, a
 * user's removal): the `collect` hook.
 *
 * The engine is given the desired configuration less the users the agent cut on its own
 * (entitlements: the `withhold` hook names them, asked anew on each apply) and less its
 * UserLimits (entitlements/engine-view.ts): a cut user is a hot removal, and a user entitled
 * again a hot addition, of the same desired state applied again (`reapply`).
 */
export interface UserEditor {
  addUser(inboundTag: string, user: InboundUser): Promise<void>;
  removeUser(inboundTag: string, email: string): Promise<void>;
}

export interface ApplierDeps {
  stateDir: string;
  engine: EngineProcess;
  users: UserEditor;
  apiPort: () => number;
  log: Logger;
  /** Reads the engine's counters into the usage journal. */
  collect: () => Promise<void>;
  /** Ends the open connections of these users (hot removal). */
  cut: (emails: string[]) => Promise<void>;
  /** Emails of users the engine must not have though the configuration lists them (users cut by the agent). */
  withhold?: (config: NodeConfig) => Promise<ReadonlySet<string>>;
}

export interface ApplyOutcome {
  success: boolean;
  error: string;
  /** How it was applied. */
  how: 'unchanged' | 'hot' | 'restart' | 'failed';
}

const kindOf = (err: unknown): string | undefined => (err as { kind?: string } | null)?.kind;

const NONE: ReadonlySet<string> = new Set();

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => a.size === b.size && [...a].every((x) => b.has(x));

export class Applier {
  /** What the engine runs now (null: nothing applied yet). */
  private running: DesiredState | null;
  /** The users the engine was last given without (entitlements/engine-view.ts). */
  private withheld: ReadonlySet<string>;

  constructor(
    private readonly d: ApplierDeps,
    applied: DesiredState | null,
    engineWithheld: ReadonlySet<string> = new Set(),
  ) {
    this.running = applied;
    this.withheld = engineWithheld;
  }

  get appliedRevision(): bigint {
    return this.running?.revision ?? 0n;
  }

  /** Ports of the running configuration's inbounds. */
  inboundPorts(): number[] {
    return (this.running?.config?.xray?.inbounds ?? []).map((i) => i.port);
  }

  get configFile(): string {
    return join(this.d.stateDir, 'engine', 'config.json');
  }

  private get certRoot(): string {
    return join(this.d.stateDir, 'certs');
  }

  /** The running desired state applied again: the users withheld now leave the engine, the ones no longer withheld come back. */
  async reapply(): Promise<ApplyOutcome | null> {
    if (!this.running || !this.d.engine.running) return null;
    return this.apply(this.running);
  }

  async apply(next: DesiredState): Promise<ApplyOutcome> {
    const desired: NodeConfig = next.config ?? { xray: undefined, certificates: [], userLimits: [] };
    try {
      const withheld = (await this.d.withhold?.(desired)) ?? NONE;
      const config = engineView(desired, withheld);
      const plan =
        this.running?.config && this.d.engine.running
          ? planChange(engineView(this.running.config, this.withheld), config)
          : { kind: 'restart' as const, reason: 'engine not running' };
      if (plan.kind === 'same') {
        await this.record(next, withheld);
        return { success: true, error: '', how: 'unchanged' };
      }
      if (plan.kind === 'users') {
        const hot = await this.applyUsers(config, plan.changes);
        if (hot === true) {
          await this.record(next, withheld);
          return { success: true, error: '', how: 'hot' };
        }
        this.d.log.info({ reason: hot }, 'user change falls back to a restart');
      }
      await this.applyByRestart(config);
      await this.record(next, withheld);
      return { success: true, error: '', how: 'restart' };
    } catch (err) {
      const error = applyErrorText(err);
      this.d.log.warn({ revision: String(next.revision), error }, 'desired state not applied; the previous configuration keeps running');
      return { success: false, error, how: 'failed' };
    }
  }

  /** Starts the engine on the configuration on disk (after a crash of the engine or at start). */
  async startEngine(): Promise<void> {
    if (this.d.engine.running || !this.running) return;
    // The file names the API port of the agent that wrote it; after a clean stop this agent
    // chose another one, so the file is rendered again (certificate files laid out again too).
    if (this.running.config) {
      const withheld = (await this.d.withhold?.(this.running.config)) ?? NONE;
      await writeFileAtomic(this.configFile, (await this.render(engineView(this.running.config, withheld))).text);
      await this.recordWithheld(withheld);
    }
    await this.d.engine.start(this.configFile, this.d.apiPort());
  }

  /** A forced restart (the restart_xray command): counters collected first. */
  async restartEngine(): Promise<void> {
    await this.d.collect().catch((err) => this.d.log.warn({ err }, 'usage not collected before the restart'));
    await this.d.engine.stop();
    await this.startEngine();
  }

  private async record(next: DesiredState, withheld: ReadonlySet<string>): Promise<void> {
    await saveApplied(this.d.stateDir, next);
    this.running = next;
    await this.recordWithheld(withheld);
  }

  private async recordWithheld(withheld: ReadonlySet<string>): Promise<void> {
    if (sameSet(withheld, this.withheld)) return;
    await saveEngineWithheld(this.d.stateDir, withheld);
    this.withheld = withheld;
  }

  private async render(config: NodeConfig) {
    const layout = await layOutCertificates(this.certRoot, config.certificates);
    const json = renderXrayConfig(config, { certificatePaths: layout.paths, apiPort: this.d.apiPort() });
    return { text: `${JSON.stringify(json, null, 2)}\n`, layout };
  }

  /** true when done; otherwise why a restart is needed. */
  private async applyUsers(config: NodeConfig, changes: InboundUserChange[]): Promise<true | string> {
    // Rendered first: users the renderer refuses fail the apply before anything changes.
    const { text } = await this.render(config);
    const removed = changes.flatMap((c) => c.remove);
    if (removed.length > 0) await this.d.collect().catch((err) => this.d.log.warn({ err }, 'usage not collected before removal'));
    for (const change of changes) {
      try {
        for (const email of change.remove)
          await this.d.users.removeUser(change.tag, email).catch((err) => {
            if (kindOf(err) !== 'not-found') throw err;
          });
        for (const user of change.add)
          await this.d.users.addUser(change.tag, user).catch(async (err) => {
            if (kindOf(err) !== 'exists') throw err;
            await this.d.users.removeUser(change.tag, user.email);
            await this.d.users.addUser(change.tag, user);
          });
      } catch (err) {
        return `inbound ${change.tag}: ${(err as Error).message}`;
      }
    }
    // The file follows, so that the next start of the engine has the same users.
    await writeFileAtomic(this.configFile, text);
    if (removed.length > 0) await this.d.cut(removed).catch((err) => this.d.log.warn({ err }, 'connections of removed users not ended'));
    this.d.log.info(
      { inbounds: changes.length, added: changes.reduce((n, c) => n + c.add.length, 0), removed: removed.length },
      'users changed without a restart',
    );
    return true;
  }

  private async applyByRestart(config: NodeConfig): Promise<void> {
    const { text, layout } = await this.render(config);
    const nextFile = join(this.d.stateDir, 'engine', 'config.next.json');
    const previousFile = join(this.d.stateDir, 'engine', 'config.previous.json');
    await writeFileAtomic(nextFile, text);
    const verdict = await engineTest(this.d.engine.settings, nextFile);
    if (!verdict.ok) {
      await rm(nextFile, { force: true });
      throw new EngineRefusal(verdict.output);
    }
    const wasRunning = this.d.engine.running;
    if (wasRunning) {
      await this.d.collect().catch((err) => this.d.log.warn({ err }, 'usage not collected before the restart'));
      await this.d.engine.stop();
    }
    const hadPrevious = await rename(this.configFile, previousFile).then(
      () => true,
      () => false,
    );
    await rename(nextFile, this.configFile);
    try {
      await this.d.engine.start(this.configFile, this.d.apiPort());
    } catch (err) {
      if (hadPrevious) {
        await rename(previousFile, this.configFile);
        if (wasRunning)
          await this.d.engine
            .start(this.configFile, this.d.apiPort())
            .catch((e) => this.d.log.error({ err: e }, 'the previous configuration does not start either'));
      }
      throw err;
    }
    await rm(previousFile, { force: true });
    const keep = new Set(layout.dirs);
    await pruneCertificates(this.certRoot, keep);
  }
}

export class EngineRefusal extends Error {
  override name = 'EngineRefusal';
}

/** The ApplyResult error text: what went wrong, short enough for the gateway's 64 KiB bound. */
export function applyErrorText(err: unknown): string {
  const text =
    err instanceof XrayConfigError
      ? `configuration not renderable: ${err.message}`
      : err instanceof EngineRefusal
        ? `the engine refused the configuration: ${err.message}`
        : err instanceof CertificateLayoutError
          ? err.message
          : `${(err as Error)?.message ?? String(err)}`;
  return (text.length > 32_000 ? `${text.slice(0, 32_000)}…` : text).replaceAll('\u0000', '');
}
