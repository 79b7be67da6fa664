import type { MessageBus } from '@svc/domain';

/**
 * The bus inside one process (all-in-one mode). Messages go through JSON like they do over
 * Redis, so a producer cannot hand a consumer a live object, and are delivered on a later
 * turn of the event loop, never inside publish().
 */
export function createMemoryBus(): MessageBus {
  const topics = new Map<string, Set<(message: unknown) => void>>();
  return {
    async publish(topic, message) {
      const handlers = topics.get(topic);
      if (!handlers || handlers.size === 0) return;
      const wire = JSON.stringify(message);
      for (const handler of [...handlers]) setImmediate(() => handlers.has(handler) && deliver(handler, wire));
    },
    async subscribe(topic, handler) {
      let handlers = topics.get(topic);
      if (!handlers) {
        handlers = new Set();
        topics.set(topic, handlers);
      }
      // A handler subscribed twice gets two deliveries, as with two Redis subscriptions.
      const own = (m: unknown) => handler(m);
      handlers.add(own);
      return async () => {
        handlers.delete(own);
        if (handlers.size === 0 && topics.get(topic) === handlers) topics.delete(topic);
      };
    },
  };
}

function deliver(handler: (message: unknown) => void, wire: string) {
  try {
    handler(JSON.parse(wire));
  } catch {
    // A failing consumer must not break the producer or the other consumers.
  }
}
