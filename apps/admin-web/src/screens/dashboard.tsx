import { Anchor, Card, SegmentedControl, SimpleGrid, Stack, Text } from '@mantine/core';
import { formatMoney } from '@svc/format';
import { formatBytes, formatDate, formatNumber } from '@svc/web-ui';
import { useQuery } from '@tanstack/react-query';
import { Link, type LinkProps } from '@tanstack/react-router';
import { type ReactNode, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { PageHeader } from '../components/page-header.tsx';
import { useFallbackInterval } from '../events.ts';

const RANGES = { '24h': 1, '7d': 7, '30d': 30, '90d': 90 } as const;
type Range = keyof typeof RANGES;

/** The fleet at a glance: nodes, subscriptions, traffic and revenue over a range, certificates. Each tile opens its list. */
export function DashboardScreen() {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const [range, setRange] = useState<Range>('24h');
  const window = useMemo(() => {
    const to = new Date();
    return { from: new Date(to.getTime() - RANGES[range] * 86_400_000).toISOString(), to: to.toISOString() };
  }, [range]);
  const poll = useFallbackInterval(30_000);
  const stats = useQuery({
    queryKey: ['stats', range],
    queryFn: () => unwrap(api.GET('/api/v1/stats/overview', { params: { query: window } })),
    refetchInterval: poll,
  });
  const s = stats.data;
  return (
    <>
      <PageHeader
        title={t('dashboard.title')}
        actions={
          <SegmentedControl
            aria-label={t('dashboard.range')}
            value={range}
            onChange={(v) => setRange(v as Range)}
            data={Object.keys(RANGES).map((r) => ({ value: r, label: t(`dashboard.ranges.${r}`) }))}
          />
        }
      />
      <SimpleGrid cols={{ base: 1, xs: 2, md: 3 }} spacing="md">
        <Tile
          title={t('dashboard.nodesOnline')}
          link={{ to: '/nodes', search: { connectivity: 'online' } }}
          value={s && `${formatNumber(lng, s.nodes.online)} / ${formatNumber(lng, s.nodes.total)}`}
        >
          {s && (
            <Link to="/nodes" search={{ connectivity: 'offline' }}>
              {t('dashboard.nodesOffline', { count: s.nodes.offline, n: formatNumber(lng, s.nodes.offline) })}
            </Link>
          )}
        </Tile>
        <Tile
          title={t('dashboard.activeSubscriptions')}
          link={{ to: '/subscriptions', search: { status: 'active' } }}
          value={s && formatNumber(lng, s.subscriptions.active)}
        >
          {s &&
            t('dashboard.subscriptionsOther', {
              limited: formatNumber(lng, s.subscriptions.limited),
              expired: formatNumber(lng, s.subscriptions.expired),
            })}
        </Tile>
        <Tile
          title={t('dashboard.traffic')}
          link={{ to: '/subscriptions', search: { sort: '-used' } }}
          value={s && formatBytes(lng, s.traffic.total_bytes)}
        >
          {s &&
            t('dashboard.trafficSplit', { up: formatBytes(lng, s.traffic.uplink_bytes), down: formatBytes(lng, s.traffic.downlink_bytes) })}
        </Tile>
        <Tile
          title={t('dashboard.revenue')}
          link={{ to: '/payments', search: { status: 'succeeded', from: day(window.from) } }}
          value={
            s &&
            (s.revenue.by_currency.length === 0
              ? '—'
              : s.revenue.by_currency.map((r) => formatMoney(r.amount, r.currency, lng)).join(' · '))
          }
        >
          {s && t('dashboard.payments', { count: s.revenue.by_currency.reduce((n, r) => n + r.payments, 0) })}
        </Tile>
        <Tile title={t('dashboard.certificates')} link={{ to: '/certificates' }} value={s && formatNumber(lng, s.certificates.total)}>
          {s && (
            <>
              <Link to="/certificates" search={{ state: 'expiring' }}>
                {t('dashboard.certificatesExpiring', { n: formatNumber(lng, s.certificates.expiring_within_30_days) })}
              </Link>
              {' · '}
              <Link to="/certificates" search={{ state: 'failing' }}>
                {t('dashboard.certificatesFailing', { n: formatNumber(lng, s.certificates.failing) })}
              </Link>
              {' · '}
              {t('dashboard.certificatesNext', { next: formatDate(lng, s.certificates.next_expiry) })}
            </>
          )}
        </Tile>
      </SimpleGrid>
    </>
  );
}

/** The browser's calendar day of an instant (yyyy-mm-dd), as the payments screen's date filter reads it. */
const day = (iso: string) => {
  const d = new Date(iso);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};

function Tile({ title, value, link, children }: { title: string; value: ReactNode; link?: LinkProps; children?: ReactNode }) {
  return (
    <Card withBorder padding="lg" component="section" aria-label={title}>
      <Stack gap={4}>
        {link ? (
          <Anchor component={Link} {...(link as object)} size="sm" fw={600}>
            {title}
          </Anchor>
        ) : (
          <Text size="sm" c="dimmed" fw={600}>
            {title}
          </Text>
        )}
        <Text fz={28} fw={700} lh={1.2}>
          {value ?? '…'}
        </Text>
        {children && (
          <Text size="sm" component="div">
            {children}
          </Text>
        )}
      </Stack>
    </Card>
  );
}
