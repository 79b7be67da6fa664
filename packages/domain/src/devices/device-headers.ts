import { ValidationError } from '../errors.ts';
import { isStorableText } from '../shared/text.ts';

/** What a client app says about itself when it fetches its link (Happ's headers, which Remnawave and others read). */
export interface DeviceHeaders {
  /** x-hwid: the app's own id of the device (1 to 128 visible ASCII characters). */
  hwid: string;
  /** x-device-os, x-ver-os, x-device-model, User-Agent; null when not sent. */
  os: string | null;
  os_version: string | null;
  model: string | null;
  user_agent: string | null;
}

export const HWID_MAX = 128;
const BOUNDS = { os: 64, os_version: 64, model: 128 } as const;
export const USER_AGENT_MAX = 256;

/** Visible ASCII only, no space: what the apps send (UUIDs, hex digests, Android ids). */
function visibleAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

/** Text a person can read: the text rule, and no control characters (a header cannot carry them anyway). */
function readable(s: string): boolean {
  if (!isStorableText(s)) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return false;
  }
  return true;
}

/** At most `max` UTF-16 units, never ending inside a surrogate pair. */
function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.charCodeAt(max - 1) >= 0xd800 && s.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max;
  return s.slice(0, cut);
}

/**
 * The device a fetch names, from its headers (`get` reads one by lowercase name), or null when
 * it sends no x-hwid (the fetch is answered as ever). A hostile value is refused naming the
 * header (400, nothing recorded): an x-hwid that is empty, longer than 128 or not visible ASCII;
 * an OS, version or model longer than its bound or holding control characters. A long
 * User-Agent is kept to its first 256 characters (apps put their version in it; nobody is
 * refused for a long one); one that breaks the text rule is left out.
 */
export function parseDeviceHeaders(get: (name: string) => string | undefined): DeviceHeaders | null {
  const raw = get('x-hwid');
  if (raw === undefined) return null;
  const hwid = raw.trim();
  if (hwid.length < 1 || hwid.length > HWID_MAX || !visibleAscii(hwid)) {
    throw new ValidationError('invalid device id', { 'x-hwid': `must be 1 to ${HWID_MAX} visible ASCII characters` });
  }
  const field = (header: string, max: number): string | null => {
    const v = get(header)?.trim();
    if (v === undefined || v === '') return null;
    if (v.length > max || !readable(v)) {
      throw new ValidationError('invalid device header', { [header]: `must be at most ${max} characters of readable text` });
    }
    return v;
  };
  const ua = get('user-agent')?.trim();
  return {
    hwid,
    os: field('x-device-os', BOUNDS.os),
    os_version: field('x-ver-os', BOUNDS.os_version),
    model: field('x-device-model', BOUNDS.model),
    user_agent: ua && readable(ua) ? clip(ua, USER_AGENT_MAX) : null,
  };
}
