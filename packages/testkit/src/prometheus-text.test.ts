import { describe, expect, it } from 'vitest';
import { parseExposition } from './prometheus-text.ts';

describe('the test parser reads the Prometheus text format as Prometheus does', () => {
  it('reads families, labels with escapes, NaN and infinities, histograms per label set', () => {
    const f = parseExposition(
      [
        '# HELP c A counter\\nwith a newline',
        '# TYPE c counter',
        'c{a="x\\"y",b="back\\\\slash"} 5',
        'c 7 1700000000000',
        '# TYPE g gauge',
        'g Nan',
        'g{k="v"} -Inf',
        '# TYPE h histogram',
        'h_bucket{le="1",route="/a"} 1',
        'h_bucket{le="+Inf",route="/a"} 2',
        'h_sum{route="/a"} 1.5e0',
        'h_count{route="/a"} 2',
        '',
      ].join('\n'),
    );
    expect(f.get('c')).toMatchObject({ type: 'counter', help: 'A counter\nwith a newline' });
    expect(f.get('c')?.samples[0]?.labels).toEqual({ a: 'x"y', b: 'back\\slash' });
    expect(Number.isNaN(f.get('g')?.samples[0]?.value)).toBe(true);
    expect(f.get('g')?.samples[1]?.value).toBe(Number.NEGATIVE_INFINITY);
    expect(f.get('h')?.samples.map((s) => s.name)).toEqual(['h_bucket', 'h_bucket', 'h_sum', 'h_count']);
  });

  it.each([
    ['a bad metric name', '1abc 1'],
    ['a bad value', 'x one'],
    ['an unterminated label value', 'x{a="b} 1'],
    ['a bad escape', 'x{a="\\t"} 1'],
    ['a label twice', 'x{a="1",a="2"} 1'],
    ['a series twice', 'x{a="1"} 1\nx{a="1"} 2'],
    ['a family split in two', 'x 1\ny 1\nx{a="1"} 2'],
    ['a TYPE after samples', 'x 1\n# TYPE x counter'],
    ['a histogram without +Inf', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_count 1'],
    ['a histogram whose count is not its +Inf bucket', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_count 3'],
    ['decreasing buckets', '# TYPE h histogram\nh_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2\nh_count 2'],
  ])('refuses %s', (_what, text) => {
    expect(() => parseExposition(text)).toThrow();
  });
});
