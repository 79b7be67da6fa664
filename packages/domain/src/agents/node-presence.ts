import { sql } from 'kysely';
import { recountDevicesOfNodes } from '../devices/device-report.ts';
import { recordEvents } from '../events/record-event.ts';
import type { DomainDeps } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/**
 * node.offline, after a grace (docs/events.md, "Nodes"; the `nodes.presence-sweep` job): enabled
 * nodes announced online whose agent has had no stream for longer than
 * notify.node_offline_grace_seconds are announced offline, once per outage (presence_announced
 * records what was last said; the stream's admission says node.online when it comes back). A
 * node that reconnects within the grace raises neither. One statement: two sweeps at once, or
 * one run again, announce nothing twice. Returns how many it announced.
 *
 * The same moment takes the devices the node listed out of the fleet-wide device count
 * (recountDevicesOfNodes): a denial only they caused lifts now, not at some other node's next
 * report. Not at the stream's end: a gateway restart or a short network break would lift
 * denials on every node for the seconds until the agents report again.
 */
export async function announceOfflineNodes(deps: Pick<DomainDeps, 'db' | 'clock' | 'log' | 'bus' | 'jobs' | 'config'>): Promise<number> {
  const grace = deps.config.notify.node_offline_grace_seconds;
  return unitOfWork(deps, async (uow) => {
    const now = deps.clock.now();
    const { rows } = await sql<{ id: string; name: string; last_seen_at: Date | null }>`
      update nodes set presence_announced = 'offline'
       where presence_announced = 'online' and connectivity = 'offline' and admin_status = 'enabled'
         and coalesce(last_seen_at, created_at) <= ${new Date(now.getTime() - grace * 1000)}
      returning id, name, last_seen_at`.execute(uow.db);
    await recountDevicesOfNodes(
      uow,
      rows.map((r) => r.id),
      now,
    );
    await recordEvents(
      uow,
      rows.map((r) => ({
        type: 'node.offline' as const,
        payload: {
          node_id: r.id,
          name: r.name,
          offline_since: new Date(r.last_seen_at ?? now).toISOString(),
          grace_seconds: grace,
        },
      })),
      now,
    );
    return rows.length;
  });
}
