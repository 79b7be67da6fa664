import { SegmentedControl, Skeleton, Stack, Text } from '@mantine/core';
import { formatBytes } from '@svc/format';
import { UsageChart, type UsageSeries } from '@svc/web-ui';
import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { Failure } from '../frame.tsx';

type Granularity = 'hour' | 'day' | 'month';

/**
 * Traffic over time (GET /portal/v1/subscriptions/{id}/usage, the server's default range for
 * each granularity): downloaded and uploaded per UTC hour, day or month, drawn by the admin
 * panel's uPlot chart. Its own chunk (uPlot and its stylesheet): the first load does not carry it.
 */
export default function Usage({ id }: { id: string }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const [granularity, setGranularity] = useState<Granularity>('day');
  const usage = useQuery({
    queryKey: ['/portal/v1/subscriptions/{id}/usage', id, granularity],
    queryFn: () => unwrap(api.GET('/portal/v1/subscriptions/{id}/usage', { params: { path: { id }, query: { granularity } } })),
  });
  const chart = useMemo(() => {
    const items = usage.data?.items ?? [];
    const series: UsageSeries[] = [
      { label: t('usage.down'), color: '#1c7ed6', values: items.map((i) => i.downlink_bytes) },
      { label: t('usage.up'), color: '#e8590c', values: items.map((i) => i.uplink_bytes) },
    ];
    return { times: items.map((i) => Date.parse(i.start) / 1000), series };
  }, [usage.data, t]);
  const format = useCallback((v: number) => formatBytes(v, lng), [lng]);
  const total = (usage.data?.items ?? []).reduce((n, i) => n + i.downlink_bytes + i.uplink_bytes, 0);
  return (
    <Stack gap="xs" data-testid="usage">
      <SegmentedControl
        size="xs"
        fullWidth
        aria-label={t('usage.granularity')}
        value={granularity}
        onChange={(v) => setGranularity(v as Granularity)}
        data={(['hour', 'day', 'month'] as const).map((g) => ({ value: g, label: t(`usage.${g}`) }))}
      />
      {usage.isError ? (
        <Failure message={t('usage.failed')} retry={() => usage.refetch()} />
      ) : !usage.data ? (
        <Skeleton height={200} />
      ) : usage.data.items.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid="usage-none">
          {t('usage.none')}
        </Text>
      ) : (
        <>
          <Text size="sm">{t('usage.total', { total: formatBytes(total, lng) })}</Text>
          <div dir="ltr">
            <UsageChart times={chart.times} series={chart.series} format={format} height={200} label={t('usage.chart')} />
          </div>
        </>
      )}
    </Stack>
  );
}
