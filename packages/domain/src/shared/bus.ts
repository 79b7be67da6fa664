/**
 * The message bus between processes (docs/architecture.md, packages/bus: nodes.changed,
 * hand-overs, commands): fire-and-forget publish/subscribe of JSON messages on named topics. In-process memory in all-in-one mode,
 * Redis pub/sub in split mode. Delivery is at most once; whoever needs certainty re-checks
 * the database (the gateway reconciles revisions on a timer).
 */
export type Unsubscribe = () => Promise<void>;

export interface MessageBus {
  publish(topic: string, message: unknown): Promise<void>;
  /** Resolves once the subscription is active: a message published after that is delivered. */
  subscribe(topic: string, handler: (message: unknown) => void): Promise<Unsubscribe>;
  /**
   * Calls `handler` each time the bus's connection comes back after an outage (Redis restarted
   * or failed over): whatever was published meanwhile was lost, so a cache emptied by messages
   * drops what it holds. Returns the way to stop. A bus that never loses its connection (memory)
   * never calls it.
   */
  onReconnect?(handler: () => void): () => void;
}

/** Topics; one list so producers and consumers cannot drift apart. */
export const TOPICS = {
  /** { ids: string[] }: these nodes' desired state or admission (enabled, deleted) changed. */
  nodesChanged: 'nodes.changed',
  /** { node_id, session, replica }: a replica accepted a new Sync stream of this node; older ones end. */
  streamOpened: 'nodes.stream-opened',
  /** AgentCommandRequest: for the replica holding the node's stream. */
  agentCommands: 'agent.commands',
  /** Prefix of per-request reply topics (command acknowledgements, LogBatch relays). */
  replies: 'agent.replies.',
  /** {}: some subscription's token, status, credentials or client changed; cached link answers are dropped. */
  subscriptionsChanged: 'subscriptions.changed',
  /** { key }: an operator setting changed; processes caching it read it again. */
  settingsChanged: 'settings.changed',
  /** { id }: this admin's role, password (token generation) or existence changed; per-request authorization caches drop it. */
  adminsChanged: 'admins.changed',
  /** { id: the token's hash }: an API token was revoked; per-request authorization caches drop it. */
  apiTokensChanged: 'api_tokens.changed',
  /** AdminLiveEvent (live/admin-events.ts): what the admin panel's event stream passes on. */
  adminEvents: 'admin.events',
  /** { ids: string[] }: these nodes' DeviceDenials changed (issue 36); the replica holding each stream sends it. */
  deviceDenialsChanged: 'devices.denials-changed',
} as const;
