/**
 * The little XML Route 53 speaks for DNS-01, read and written without an XML library: its
 * answers are small, flat and bounded (DNS_API_MAX_BYTES), and we read a few named elements out
 * of them. Extraction is indexOf from left to right (linear on any input, no regex that could
 * backtrack); text is unescaped; what is not there is absent, never a crash.
 */

export const ROUTE53_XMLNS = 'https://route53.amazonaws.com/doc/2013-04-01/';

/** The raw inner text of every `<tag>…</tag>` in `xml`, in order (attributes-free tags, as Route 53 writes them). */
export function xmlElements(xml: string, tag: string): string[] {
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  const out: string[] = [];
  let at = 0;
  for (;;) {
    const start = xml.indexOf(open, at);
    if (start < 0) break;
    const end = xml.indexOf(close, start + open.length);
    if (end < 0) break;
    out.push(xml.slice(start + open.length, end));
    at = end + close.length;
  }
  return out;
}

/** The unescaped text of the first `<tag>`, or undefined. */
export function xmlText(xml: string, tag: string): string | undefined {
  const [raw] = xmlElements(xml, tag);
  return raw === undefined ? undefined : xmlUnescape(raw);
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function xmlUnescape(s: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const amp = s.indexOf('&', at);
    if (amp < 0) return out + s.slice(at);
    const semi = s.indexOf(';', amp);
    const name = semi > amp && semi - amp <= 10 ? s.slice(amp + 1, semi) : '';
    let ch = ENTITIES[name];
    if (ch === undefined && /^#(\d{1,7}|x[0-9A-Fa-f]{1,6})$/.test(name)) {
      const code = name[1] === 'x' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      ch = code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
    }
    if (ch === undefined) {
      out += s.slice(at, amp + 1);
      at = amp + 1;
    } else {
      out += s.slice(at, amp) + ch;
      at = semi + 1;
    }
  }
}

const ESCAPES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' };

export const xmlEscape = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/**
 * A TXT value as Route 53 stores it: one or more quoted character-strings (at most 255 bytes
 * each), `"` and `\` escaped, bytes outside printable ASCII as `\ddd` (octal).
 */
export function route53TxtValue(value: string): string {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length === 0) return '""';
  const strings: string[] = [];
  for (let i = 0; i < bytes.length; i += 255) {
    let s = '';
    for (const b of bytes.subarray(i, i + 255)) {
      if (b === 0x22 || b === 0x5c) s += `\\${String.fromCharCode(b)}`;
      else if (b >= 0x20 && b <= 0x7e) s += String.fromCharCode(b);
      else s += `\\${b.toString(8).padStart(3, '0')}`;
    }
    strings.push(`"${s}"`);
  }
  return strings.join(' ');
}

/** The value a Route 53 TXT record holds (its character-strings joined), the inverse of route53TxtValue. */
export function route53TxtDecode(raw: string): string {
  if (!raw.startsWith('"')) return raw;
  const bytes: number[] = [];
  let inside = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x22) {
      inside = !inside;
    } else if (!inside) {
      // Blanks between the character-strings.
    } else if (c === 0x5c && i + 1 < raw.length) {
      const octal = raw.slice(i + 1, i + 4);
      if (/^[0-7]{3}$/.test(octal)) {
        bytes.push(Number.parseInt(octal, 8) & 0xff);
        i += 3;
      } else {
        bytes.push(...Buffer.from(raw[i + 1] as string, 'utf8'));
        i += 1;
      }
    } else {
      bytes.push(...Buffer.from(raw[i] as string, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** One resource record set, its values kept as Route 53 wrote them (a DELETE must repeat them exactly). */
export interface Route53RecordSet {
  /** Absolute, with the trailing dot. */
  name: string;
  type: string;
  ttl: number;
  values: string[];
  /** Present on sets with a routing policy (weighted, latency…), which DNS-01 does not change. */
  setIdentifier?: string | undefined;
  alias?: boolean | undefined;
}

export function parseRecordSets(xml: string): Route53RecordSet[] {
  return xmlElements(xml, 'ResourceRecordSet').map((set) => ({
    name: xmlText(set, 'Name') ?? '',
    type: xmlText(set, 'Type') ?? '',
    ttl: Number(xmlText(set, 'TTL') ?? '0'),
    values: xmlElements(set, 'Value').map(xmlUnescape),
    setIdentifier: xmlText(set, 'SetIdentifier'),
    alias: set.includes('<AliasTarget>'),
  }));
}

export interface Route53HostedZone {
  /** Without the `/hostedzone/` prefix. */
  id: string;
  /** Absolute, with the trailing dot. */
  name: string;
  private: boolean;
}

export function parseHostedZones(xml: string): Route53HostedZone[] {
  return xmlElements(xml, 'HostedZone').map((z) => ({
    id: (xmlText(z, 'Id') ?? '').replace(/^\/hostedzone\//, ''),
    name: xmlText(z, 'Name') ?? '',
    private: xmlText(z, 'PrivateZone') === 'true',
  }));
}

/** Route 53's error: ErrorResponse's Code and Message, or InvalidChangeBatch's Messages. */
export function parseRoute53Error(xml: string): { code: string | undefined; message: string } {
  const code = xmlText(xml, 'Code') ?? (xml.includes('<InvalidChangeBatch') ? 'InvalidChangeBatch' : undefined);
  return { code, message: xmlElements(xml, 'Message').map(xmlUnescape).join('; ') };
}

export interface Route53Change {
  action: 'CREATE' | 'DELETE' | 'UPSERT';
  set: Route53RecordSet;
}

export function changeBatchXml(changes: readonly Route53Change[], comment: string): string {
  const change = ({ action, set }: Route53Change) =>
    `<Change><Action>${action}</Action><ResourceRecordSet><Name>${xmlEscape(set.name)}</Name><Type>${xmlEscape(set.type)}</Type>` +
    `<TTL>${set.ttl}</TTL><ResourceRecords>${set.values
      .map((v) => `<ResourceRecord><Value>${xmlEscape(v)}</Value></ResourceRecord>`)
      .join('')}</ResourceRecords></ResourceRecordSet></Change>`;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<ChangeResourceRecordSetsRequest xmlns="${ROUTE53_XMLNS}"><ChangeBatch>` +
    `<Comment>${xmlEscape(comment)}</Comment><Changes>${changes.map(change).join('')}</Changes></ChangeBatch></ChangeResourceRecordSetsRequest>`
  );
}
