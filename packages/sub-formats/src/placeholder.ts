import type { ServerEntry, SubscriptionDocument, SubscriptionStatus } from './model.ts';
import { unusableReason } from './stream.ts';

/**
 * The placeholder rule, one place for every format. Client apps treat an empty or unparsable
 * subscription as an error (and some drop the profile), so a document with nothing to serve still
 * renders as a valid one holding exactly one entry whose name tells the user why, and which cannot
 * carry traffic: VLESS over plain tcp to 0.0.0.0:1 with the nil uuid.
 */

export const PLACEHOLDER_ADDRESS = '0.0.0.0';
export const PLACEHOLDER_PORT = 1;
export const PLACEHOLDER_UUID = '00000000-0000-0000-0000-000000000000';

export const PLACEHOLDER_NAMES: Record<Exclude<SubscriptionStatus, 'active'>, string> & {
  empty: string;
  unsupported: string;
  devices: string;
} = {
  expired: '⛔ Subscription expired',
  limited: '⛔ Traffic limit reached',
  disabled: '⛔ Subscription disabled',
  pending: '⏳ Awaiting approval',
  /** Active, but no servers are assigned. */
  empty: 'No servers available',
  /** Active with servers, none of which this app's format can express (e.g. only XHTTP for sing-box). */
  unsupported: 'No servers available for this app',
  /** A fetch from a new device over the subscription's device limit (GET /sub/{token} with x-hwid; docs/subscription-link.md). */
  devices: '⛔ Device limit reached',
};

export function placeholderServer(name: string): ServerEntry {
  return {
    name,
    protocol: 'vless',
    address: PLACEHOLDER_ADDRESS,
    port: PLACEHOLDER_PORT,
    uuid: PLACEHOLDER_UUID,
    flow: '',
    stream: { network: 'tcp', security: 'none' },
  };
}

/**
 * The placeholder entry a document needs, if any: none when it is active and `usable` (the servers
 * the format can render, by default all of them) is not empty, else exactly one naming the reason.
 */
export function placeholderServers(doc: SubscriptionDocument, usable: readonly ServerEntry[] = doc.servers): ServerEntry[] {
  if (doc.status !== 'active') return [placeholderServer(PLACEHOLDER_NAMES[doc.status])];
  if (usable.length > 0) return [];
  return [placeholderServer(doc.servers.length === 0 ? PLACEHOLDER_NAMES.empty : PLACEHOLDER_NAMES.unsupported)];
}

/** Why a format leaves an entry out (undefined: it renders it). */
export type SkipRule = (server: ServerEntry) => string | undefined;

/**
 * What a format renders, in document order: the active document's servers that no format rejects
 * (`unusableReason`) and this format accepts (`skip`), or the single placeholder.
 */
export function servedServers(doc: SubscriptionDocument, skip: SkipRule = () => undefined): ServerEntry[] {
  const usable = doc.status === 'active' ? doc.servers.filter((s) => !unusableReason(s) && !skip(s)) : [];
  const placeholder = placeholderServers(doc, usable);
  return placeholder.length > 0 ? placeholder : usable;
}

/**
 * Names that are safe as tags next to the format's own (groups, `direct`, ...): a server whose
 * name is taken gets " (2)", " (3)", ... Names are unique within a document, so this only
 * matters for a server called like a reserved tag.
 */
export function uniqueNames(servers: readonly ServerEntry[], reserved: readonly string[]): string[] {
  const reservedLower = new Set(reserved.map((r) => r.toLowerCase()));
  const used = new Set<string>();
  const taken = (name: string) => used.has(name) || reservedLower.has(name.toLowerCase());
  return servers.map((s) => {
    let name = s.name;
    for (let n = 2; taken(name); n++) name = `${s.name} (${n})`;
    used.add(name);
    return name;
  });
}
