import type { AgentMessage, DesiredState } from '@svc/proto';
import type { Logger } from 'pino';
import type { Applier } from '../apply/applier.ts';
import { serialQueue } from '../serial.ts';
import type { EngineProcess } from './engine-process.ts';

export interface EngineSupervisorDeps {
  engine: EngineProcess;
  applier: () => Applier;
  send: (m: AgentMessage) => boolean;
  log: Logger;
  /** The engine started, stopped or restarted: a StatusReport is due. */
  statusChanged: () => void;
}

/**
 * Everything that touches the engine, one operation at a time: desired states applied newest
 * first (one that arrives while another is applied replaces any waiting one), each answered
 * with its ApplyResult; an engine that exits on its own started again with a backoff (1 s
 * doubling to 30 s, back to 1 s once it runs); restarts on command.
 */
export class EngineSupervisor {
  /** Runs one engine operation after the ones before it. */
  readonly run = serialQueue();
  private waiting: DesiredState | null = null;
  private applying = false;
  private restartDelayMs = 1000;
  private stopped = false;

  constructor(private readonly deps: EngineSupervisorDeps) {}

  apply(ds: DesiredState): void {
    this.waiting = ds;
    if (this.applying) return;
    this.applying = true;
    const { send, log } = this.deps;
    void (async () => {
      try {
        while (this.waiting) {
          const next = this.waiting;
          this.waiting = null;
          const outcome = await this.run(() => this.deps.applier().apply(next));
          send({ applyResult: { revision: next.revision, success: outcome.success, error: outcome.error } });
          log.info({ revision: String(next.revision), how: outcome.how, success: outcome.success }, 'desired state handled');
          if (outcome.how === 'restart') this.deps.statusChanged();
        }
      } finally {
        this.applying = false;
      }
    })();
  }

  /** The engine exited on its own: started again after the backoff. */
  exited(): void {
    if (this.stopped) return;
    this.deps.statusChanged();
    const delay = this.restartDelayMs;
    this.restartDelayMs = Math.min(delay * 2, 30_000);
    const t = setTimeout(() => {
      void this.run(async () => {
        if (this.stopped || this.deps.engine.running) return;
        await this.deps.applier().startEngine();
        this.restartDelayMs = 1000;
        this.deps.statusChanged();
      }).catch((err) => {
        this.deps.log.error({ err }, 'the engine does not start again');
        this.exited();
      });
    }, delay);
    t.unref();
  }

  restartOnCommand(commandId: string): void {
    const { log } = this.deps;
    void this.run(() => this.deps.applier().restartEngine())
      .then(() => log.info({ command_id: commandId }, 'engine restarted on command'))
      .catch((err) => log.error({ err }, 'restart_xray failed'))
      .finally(() => this.deps.statusChanged());
  }

  /** No restart from now on (the agent is stopping). */
  halt(): void {
    this.stopped = true;
  }
}
