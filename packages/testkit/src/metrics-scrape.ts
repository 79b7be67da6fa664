import { type Family, type Labels, type MetricType, parseExposition } from './prometheus-text.ts';

/** A scrape parsed by the strict text-format parser (prometheus-text.ts), with readers for tests. */
export interface Scrape {
  families: Map<string, Family>;
  /** Whether a family of this name (and type, when given) was exposed. */
  has(name: string, type?: MetricType): boolean;
  /** The sum of a counter's or gauge's samples whose labels include `labels` (0 when none). */
  value(name: string, labels?: Labels): number;
  /** The summed `_count` of a histogram's series whose labels include `labels` (0 when none). */
  count(name: string, labels?: Labels): number;
  /** The summed `_sum` of a histogram's series whose labels include `labels`. */
  sum(name: string, labels?: Labels): number;
  /** Every label set a family's samples carry (buckets' `le` left out). */
  labelSets(name: string): Labels[];
}

const includes = (have: Labels, want: Labels) => Object.entries(want).every(([k, v]) => have[k] === v);

export function parseScrape(text: string): Scrape {
  const families = parseExposition(text);
  const total = (name: string, sample: string, labels: Labels) =>
    (families.get(name)?.samples ?? []).reduce((acc, s) => (s.name === sample && includes(s.labels, labels) ? acc + s.value : acc), 0);
  return {
    families,
    has: (name, type) => families.has(name) && (type === undefined || families.get(name)?.type === type),
    value: (name, labels = {}) => total(name, name, labels),
    count: (name, labels = {}) => total(name, `${name}_count`, labels),
    sum: (name, labels = {}) => total(name, `${name}_sum`, labels),
    labelSets: (name) =>
      (families.get(name)?.samples ?? []).map((s) => {
        const { le: _le, ...rest } = s.labels;
        return rest;
      }),
  };
}

/** GET a metrics URL (with the scrape token when given) and parse it; throws on anything but a 200 in the text format. */
export async function scrapeMetrics(url: string, token?: string): Promise<Scrape> {
  const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const text = await res.text();
  if (res.status !== 200) throw new Error(`scrape of ${url}: ${res.status} ${text}`);
  if (!/^text\/plain; version=0\.0\.4/.test(res.headers.get('content-type') ?? ''))
    throw new Error(`scrape of ${url}: content-type ${res.headers.get('content-type')}`);
  return parseScrape(text);
}
