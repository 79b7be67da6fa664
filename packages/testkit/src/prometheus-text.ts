/**
 * A strict parser of the Prometheus text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/), for tests that read what the
 * apps expose. The npm parsers tried fall short of the format: parse-prometheus-text-format
 * drops the labels of labelled histograms, prom2javascript refuses NaN and -Inf. This one
 * refuses what Prometheus would: bad names, bad escapes, a sample of a family that is not
 * contiguous, a TYPE after its samples, a series twice, a histogram whose buckets decrease,
 * lack +Inf or disagree with its _count.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
export type Labels = Record<string, string>;

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
  name: string;
  labels: Labels;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export class ExpositionError extends Error {
  constructor(line: number, reason: string) {
    super(`line ${line}: ${reason}`);
  }
}

/** Go's ParseFloat as Prometheus uses it: decimal or exponent forms, NaN and ±Inf in any case. */
function parseValue(text: string, line: number): number {
  const t = text.toLowerCase();
  if (t === 'nan') return Number.NaN;
  if (t === '+inf' || t === 'inf') return Number.POSITIVE_INFINITY;
  if (t === '-inf') return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new ExpositionError(line, `bad value ${JSON.stringify(text)}`);
  return Number(text);
}

function parseLabels(text: string, line: number): { labels: Labels; rest: string } {
  const labels: Labels = {};
  let i = 0;
  for (;;) {
    while (text[i] === ' ') i++;
    if (text[i] === '}') return { labels, rest: text.slice(i + 1) };
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new ExpositionError(line, 'label without =');
    const name = text.slice(i, eq).trim();
    if (!LABEL.test(name) || name.startsWith('__')) throw new ExpositionError(line, `bad label name ${JSON.stringify(name)}`);
    if (name in labels) throw new ExpositionError(line, `label ${name} twice`);
    i = eq + 1;
    if (text[i] !== '"') throw new ExpositionError(line, `label ${name}: value not quoted`);
    i++;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new ExpositionError(line, `label ${name}: unterminated value`);
      if (c === '"') break;
      if (c === '\\') {
        const e = text[i + 1];
        if (e === '\\') value += '\\';
        else if (e === '"') value += '"';
        else if (e === 'n') value += '\n';
        else throw new ExpositionError(line, `label ${name}: bad escape \\${e}`);
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[name] = value;
    i++;
    while (text[i] === ' ') i++;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new ExpositionError(line, 'expected , or } after a label');
  }
}

/** The family a sample name belongs to, given the families declared so far. */
function familyOf(name: string, families: Map<string, Family>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const f = families.get(base);
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return base;
  }
  return name;
}

export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const done = new Set<string>();
  const series = new Set<string>();
  let current: string | null = null;
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) {
      f = { name, type: 'untyped', help: '', samples: [] };
      families.set(name, f);
    }
    return f;
  };
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((raw, index) => {
    const n = index + 1;
    const line = raw.trim();
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s+(.*))?$/.exec(line);
      if (!m) return; // an ordinary comment
      const [, kind, name = '', rest = ''] = m;
      if (!NAME.test(name)) throw new ExpositionError(n, `bad metric name ${JSON.stringify(name)}`);
      const f = family(name);
      if (kind === 'TYPE') {
        if (f.samples.length > 0) throw new ExpositionError(n, `TYPE of ${name} after its samples`);
        if (!TYPES.has(rest)) throw new ExpositionError(n, `unknown type ${rest}`);
        f.type = rest as MetricType;
      } else f.help = rest.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(.*)$/.exec(line);
    if (!m) throw new ExpositionError(n, `not a sample: ${JSON.stringify(line)}`);
    const name = m[1] as string;
    let rest = m[2] as string;
    let labels: Labels = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest.slice(1), n));
    const parts = rest.trim().split(/\s+/);
    if (parts.length < 1 || parts.length > 2 || parts[0] === '') throw new ExpositionError(n, `bad sample ${JSON.stringify(line)}`);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new ExpositionError(n, 'bad timestamp');
    const value = parseValue(parts[0] as string, n);
    const owner = familyOf(name, families);
    if (owner !== current) {
      if (done.has(owner)) throw new ExpositionError(n, `samples of ${owner} are not together`);
      if (current) done.add(current);
      current = owner;
    }
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (series.has(key)) throw new ExpositionError(n, `series ${key} twice`);
    series.add(key);
    const f = family(owner);
    if (f.type === 'histogram' && name === `${owner}_bucket` && labels.le === undefined) throw new ExpositionError(n, 'bucket without le');
    f.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let g = groups.get(key);
    if (!g) {
      g = { buckets: [] };
      groups.set(key, g);
    }
    if (s.name === `${f.name}_bucket`) g.buckets.push([parseValue(le as string, 0), s.value]);
    else if (s.name === `${f.name}_count`) g.count = s.value;
  }
  for (const [key, g] of groups) {
    g.buckets.sort((a, b) => a[0] - b[0]);
    const last = g.buckets.at(-1);
    if (!last || last[0] !== Number.POSITIVE_INFINITY) throw new Error(`${f.name}${key}: no +Inf bucket`);
    for (let i = 1; i < g.buckets.length; i++)
      if ((g.buckets[i] as [number, number])[1] < (g.buckets[i - 1] as [number, number])[1])
        throw new Error(`${f.name}${key}: buckets decrease`);
    if (g.count !== last[1]) throw new Error(`${f.name}${key}: _count ${g.count} is not the +Inf bucket ${last[1]}`);
  }
}
