import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { BoundHistogram } from './bound-histogram.ts';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LABELS = ['route', 'method', 'status_class'] as const;
/** Observations on the edges of buckets, between them, below the first and above the last, on three series. */
const OBSERVED: Array<[Record<(typeof LABELS)[number], string>, number]> = [];
for (const [i, v] of [0, 0.0001, 0.0005, 0.00051, 0.001, 0.003, 0.05, 0.7, 2.5, 9.99, 10, 10.01, 300].entries()) {
  OBSERVED.push([{ route: '/sub/:token', method: 'GET', status_class: i % 3 === 0 ? '4xx' : '2xx' }, v]);
  OBSERVED.push([{ route: '/api/v1/nodes/:id', method: 'PATCH', status_class: '2xx' }, v / 3]);
}

const registries = () => {
  const ours = new Registry();
  const theirs = new Registry();
  for (const r of [ours, theirs]) r.setDefaultLabels({ app: 'svc' });
  const bound = new BoundHistogram({ name: 'h_seconds', help: 'help text', labelNames: LABELS, buckets: BUCKETS, registers: [ours] });
  const plain = new Histogram({ name: 'h_seconds', help: 'help text', labelNames: [...LABELS], buckets: BUCKETS, registers: [theirs] });
  return { ours, theirs, bound, plain };
};

describe('BoundHistogram', () => {
  it('writes out what prom-client’s Histogram writes for the same observations, whether observed through a kept child or by labels', async () => {
    const { ours, theirs, bound, plain } = registries();
    for (const [i, [labels, v]] of OBSERVED.entries()) {
      if (i % 2 === 0) bound.child(labels).observe(v);
      else bound.observe(labels, v);
      plain.observe(labels, v);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('h_seconds_bucket{le="0.0005",app="svc",route="/sub/:token",method="GET",status_class="2xx"}');
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it('keeps one series per label set: children of equal labels record into it, and a reset zeroes it for them too', async () => {
    const { ours, bound } = registries();
    const a = bound.child({ route: '/x', method: 'GET', status_class: '2xx' });
    const b = bound.child({ route: '/x', method: 'GET', status_class: '2xx' });
    a.observe(0.002);
    b.observe(0.002);
    expect(await ours.metrics()).toContain('h_seconds_count{app="svc",route="/x",method="GET",status_class="2xx"} 2');
    ours.resetMetrics();
    a.observe(1);
    const text = await ours.metrics();
    expect(text).toContain('h_seconds_count{app="svc",route="/x",method="GET",status_class="2xx"} 1');
    expect(text).toContain('h_seconds_sum{app="svc",route="/x",method="GET",status_class="2xx"} 1');
  });

  it('refuses a label set with a label missing, and ignores a value that is not a finite number', async () => {
    const { ours, bound } = registries();
    expect(() => bound.child({ route: '/x', method: 'GET' } as never)).toThrow(/status_class/);
    bound.observe({ route: '/x', method: 'GET', status_class: '2xx' }, Number.NaN);
    expect(await ours.metrics()).toContain('h_seconds_count{app="svc",route="/x",method="GET",status_class="2xx"} 0');
  });
});
