import { useMantineColorScheme } from '@mantine/core';
import { useEffect, useRef } from 'react';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface UsageSeries {
  label: string;
  color: string;
  values: number[];
}

/**
 * A time chart (uPlot: canvas, ~22 KiB gzipped): `times` in seconds, one line per series,
 * values formatted by `format` on the axis and in the legend. Resizes with its container.
 */
export function UsageChart({
  times,
  series,
  format,
  height = 240,
  label,
}: {
  times: number[];
  series: UsageSeries[];
  format: (v: number) => string;
  height?: number;
  label: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const { colorScheme } = useMantineColorScheme();
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let chart: uPlot | null = null;
    let observer: ResizeObserver | null = null;
    let live = true;
    import('uplot').then(({ default: UPlot }) => {
      if (!live) return;
      const dark = colorScheme === 'dark' || (colorScheme === 'auto' && matchMedia('(prefers-color-scheme: dark)').matches);
      const axis = {
        stroke: dark ? '#c9c9c9' : '#333',
        grid: { stroke: dark ? '#333' : '#eee' },
        ticks: { stroke: dark ? '#444' : '#ddd' },
      };
      chart = new UPlot(
        {
          width: el.clientWidth || 600,
          height,
          series: [
            {},
            ...series.map((s) => ({
              label: s.label,
              stroke: s.color,
              width: 2,
              fill: `${s.color}22`,
              value: (_: uPlot, v: number | null) => (v == null ? '—' : format(v)),
            })),
          ],
          axes: [axis, { ...axis, size: 70, values: (_: uPlot, ticks: number[]) => ticks.map(format) }],
          scales: { x: { time: true } },
          legend: { show: true },
        },
        [times, ...series.map((s) => s.values)],
        el,
      );
      observer = new ResizeObserver(() => chart?.setSize({ width: el.clientWidth, height }));
      observer.observe(el);
    });
    return () => {
      live = false;
      observer?.disconnect();
      chart?.destroy();
    };
  }, [times, series, format, height, colorScheme]);
  return <div ref={box} role="img" aria-label={label} style={{ width: '100%', minHeight: height }} />;
}
