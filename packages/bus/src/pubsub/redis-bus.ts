import type { MessageBus } from '@svc/domain';
import type { Redis } from 'ioredis';

/**
 * The bus between processes (split mode): Redis pub/sub. One connection publishes (the shared
 * command connection), one dedicated connection subscribes; a topic is SUBSCRIBEd while it
 * has at least one local handler. Channel names carry the installation's key prefix.
 */
export function createRedisBus(publisher: Redis, subscriber: Redis, prefix: string): MessageBus {
  const topics = new Map<string, Set<(message: unknown) => void>>();
  // The subscriber's connection lost and back: messages of the gap are gone (ioredis
  // resubscribes the channels by itself), so those who cache on messages are told.
  const reconnected = new Set<() => void>();
  let lost = false;
  subscriber.on('close', () => {
    lost = true;
  });
  subscriber.on('ready', () => {
    if (!lost) return;
    lost = false;
    for (const handler of [...reconnected]) {
      try {
        handler();
      } catch {
        // One failing listener must not keep the others from hearing it.
      }
    }
  });
  subscriber.on('message', (channel: string, wire: string) => {
    if (!channel.startsWith(prefix)) return;
    const handlers = topics.get(channel.slice(prefix.length));
    if (!handlers) return;
    let message: unknown;
    try {
      message = JSON.parse(wire);
    } catch {
      return;
    }
    for (const handler of [...handlers]) {
      try {
        handler(message);
      } catch {
        // A failing consumer must not break the others.
      }
    }
  });
  // Subscribe/unsubscribe calls for one topic run in order, so a quick unsubscribe+subscribe
  // never leaves the channel unsubscribed while it has handlers.
  const pending = new Map<string, Promise<unknown>>();
  const serial = (topic: string, op: () => Promise<unknown>) => {
    const next = (pending.get(topic) ?? Promise.resolve()).then(op, op);
    pending.set(topic, next);
    void next.finally(() => {
      if (pending.get(topic) === next) pending.delete(topic);
    });
    return next;
  };
  return {
    onReconnect(handler) {
      reconnected.add(handler);
      return () => {
        reconnected.delete(handler);
      };
    },
    async publish(topic, message) {
      await publisher.publish(prefix + topic, JSON.stringify(message));
    },
    async subscribe(topic, handler) {
      let handlers = topics.get(topic);
      if (!handlers) {
        handlers = new Set();
        topics.set(topic, handlers);
      }
      const own = (m: unknown) => handler(m);
      const first = handlers.size === 0;
      handlers.add(own);
      await serial(topic, async () => {
        if (first || topics.get(topic)?.size) await subscriber.subscribe(prefix + topic);
      });
      return async () => {
        const set = topics.get(topic);
        if (!set?.delete(own)) return;
        if (set.size > 0) return;
        topics.delete(topic);
        await serial(topic, async () => {
          if (!topics.has(topic)) await subscriber.unsubscribe(prefix + topic);
        });
      };
    },
  };
}
