import { readFileSync } from 'node:fs';
import { parser } from '@prometheus-io/lezer-promql';
import { describe, expect, it } from 'vitest';
import { createMetrics } from './metrics.ts';

// infra/grafana/svc-dashboard.json: importable (a data source variable, no fixed data source),
// and every PromQL expression in it reads metrics the apps export, parsed with Prometheus's own
// grammar (lezer-promql); every svc_ metric has a panel.

/** Grafana's data source variable, as panels must name it. */
const DATASOURCE = { type: 'prometheus', uid: ['$', '{datasource}'].join('') };
const dashboard = JSON.parse(readFileSync(new URL('../../../infra/grafana/svc-dashboard.json', import.meta.url), 'utf8'));

interface Target {
  expr: string;
  datasource: unknown;
}
interface Panel {
  type: string;
  title: string;
  datasource?: unknown;
  targets?: Target[];
  panels?: Panel[];
}
const panels: Panel[] = (dashboard.panels as Panel[]).flatMap((p) => [p, ...(p.panels ?? [])]);
const targets = panels.flatMap((p) => p.targets ?? []);

/** Grafana's variables as Prometheus would see them after interpolation. */
const interpolated = (expr: string) => expr.replaceAll('$__rate_interval', '5m').replaceAll('$app', '.*');

/** The metric names an expression selects; throws on a syntax error. */
function selectedMetrics(expr: string): string[] {
  const source = interpolated(expr);
  const names: string[] = [];
  const cursor = parser.parse(source).cursor();
  do {
    if (cursor.type.isError) throw new Error(`PromQL syntax error at ${cursor.from} in ${expr}`);
    if (cursor.name === 'VectorSelector') {
      const inner = cursor.node.getChild('Identifier');
      if (inner) names.push(source.slice(inner.from, inner.to));
    }
  } while (cursor.next());
  return names;
}

/** Every series name the registry exposes (a histogram's _bucket, _sum and _count). */
async function exportedSeries(): Promise<Set<string>> {
  const metrics = createMetrics('svc');
  const series = new Set<string>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    series.add(m.name);
    if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) series.add(`${m.name}${s}`);
  }
  return series;
}

describe('the Grafana dashboard', () => {
  it('is importable anywhere: panels and queries use the data source variable, no fixed data source', () => {
    const variables = dashboard.templating.list as Array<{ name: string; type: string; query: unknown }>;
    expect(variables.find((v) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(targets.length).toBeGreaterThan(10);
    for (const p of panels.filter((x) => x.type !== 'row')) expect(p.datasource, p.title).toEqual(DATASOURCE);
    for (const t of targets) expect(t.datasource).toEqual(DATASOURCE);
    expect(typeof dashboard.uid).toBe('string');
  });

  it('reads only metrics the apps export', async () => {
    const exported = await exportedSeries();
    const used = targets.flatMap((t) => selectedMetrics(t.expr));
    expect(used.length).toBeGreaterThan(targets.length - 1);
    for (const name of used) expect(exported.has(name), `${name} is not exported`).toBe(true);
  });

  it('has a panel for every svc_ metric', async () => {
    const used = new Set(targets.flatMap((t) => selectedMetrics(t.expr)).map((n) => n.replace(/_(bucket|sum|count)$/, '')));
    const ours = (await createMetrics('svc', { defaultMetrics: false }).registry.getMetricsAsJSON()).map((m) => m.name);
    expect(ours.length).toBeGreaterThan(10);
    for (const name of ours) expect(used.has(name), `no panel reads ${name}`).toBe(true);
  });

  it('a misspelt metric or broken query would be caught', () => {
    expect(() => selectedMetrics('sum(rate(svc_x_total[5m])')).toThrow(/syntax/);
    expect(selectedMetrics('sum by (job) (svc_job_queue_depth{app=~"$app"}) / on() group_left svc_jobs_total')).toEqual([
      'svc_job_queue_depth',
      'svc_jobs_total',
    ]);
  });
});
