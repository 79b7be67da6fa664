import { isStorableText } from '../shared/text.ts';

/**
 * StatusReport.enforcement (issue 36): what the node's agent enforces of NodeConfig.user_limits,
 * stored on the node (nodes.enforcement) as last reported and shown in its view. Null: the
 * agent never said, as an agent of an earlier release does not: it enforces none of them.
 */
export interface NodeEnforcement {
  device_limits: boolean;
  speed_caps: boolean;
  entitlements: boolean;
  speed_caps_error: string;
  device_limits_error: string;
  device_source: string;
  shaped_devices: string[];
  reported_at: string;
}

/** What the agent sent, before it is stored. */
export type EnforcementReport = Omit<NodeEnforcement, 'reported_at'>;

const MAX_TEXT = 500;
const MAX_DEVICES = 32;
const text = (s: string, max = MAX_TEXT) => (isStorableText(s) ? s.slice(0, max) : '');

/** The report as stored: text that breaks the text rule left out, lengths bounded, with when it was reported. */
export function storedEnforcement(r: EnforcementReport, now: Date): NodeEnforcement {
  return {
    device_limits: r.device_limits === true,
    speed_caps: r.speed_caps === true,
    entitlements: r.entitlements === true,
    speed_caps_error: text(r.speed_caps_error),
    device_limits_error: text(r.device_limits_error),
    device_source: text(r.device_source, 64),
    shaped_devices: r.shaped_devices
      .slice(0, MAX_DEVICES)
      .map((d) => text(d, 64))
      .filter((d) => d !== ''),
    reported_at: now.toISOString(),
  };
}

/** The node view's `enforcement` from the stored column. */
export function enforcementView(stored: Record<string, unknown> | null): NodeEnforcement | null {
  if (!stored) return null;
  const s = stored as Partial<NodeEnforcement>;
  return {
    device_limits: s.device_limits === true,
    speed_caps: s.speed_caps === true,
    entitlements: s.entitlements === true,
    speed_caps_error: s.speed_caps_error ?? '',
    device_limits_error: s.device_limits_error ?? '',
    device_source: s.device_source ?? '',
    shaped_devices: Array.isArray(s.shaped_devices) ? s.shaped_devices : [],
    reported_at: s.reported_at ?? '',
  };
}
