import type { Kysely } from 'kysely';

// Issue 31 item 4: an agent upgrade asked from the panel (POST /api/v1/nodes/{id}/upgrade-agent)
// and how it ended: the release asked for, the command that carried it, pending / succeeded /
// failed, the agent's words on a failure, when it was asked and when it ended. One upgrade per
// node at a time: a new request replaces the record. Frozen in time: Kysely<any>.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('nodes')
    .addColumn('agent_upgrade_version', 'text')
    .addColumn('agent_upgrade_command_id', 'text')
    .addColumn('agent_upgrade_state', 'text')
    .addColumn('agent_upgrade_error', 'text')
    .addColumn('agent_upgrade_requested_at', 'timestamptz')
    .addColumn('agent_upgrade_finished_at', 'timestamptz')
    .execute();
}
