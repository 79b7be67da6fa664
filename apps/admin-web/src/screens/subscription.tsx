import {
  Alert,
  Button,
  Card,
  CopyButton,
  Grid,
  Group,
  MultiSelect,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { modals } from '@mantine/modals';
import type { AdminSchemas } from '@svc/api-client';
import { formatBytes, formatDateTime, QrCode, UsageChart } from '@svc/web-ui';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useCallback, useMemo, useState } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { GibInput } from '../components/bytes-input.tsx';
import { DeleteButton } from '../components/delete-button.tsx';
import { showProblem } from '../components/form-errors.ts';
import { LiveLimitInputs } from '../components/limit-inputs.tsx';
import { useGroupOptions } from '../components/lookups.ts';
import { notify } from '../components/notify.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useCan } from '../me.tsx';
import { SubscriptionDevicesCard } from './subscription-devices.tsx';
import { UsageBar } from './subscriptions.tsx';

type Subscription = AdminSchemas['Subscription'];

/** One subscription: its link and QR, usage over any range, limits, expiry, renewal; rotate and delete. */
export function SubscriptionScreen({ id }: { id: string }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const can = useCan();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const sub = useQuery({
    queryKey: ['subscriptions', 'one', id],
    queryFn: () => unwrap(api.GET('/api/v1/subscriptions/{id}', { params: { path: { id } } })),
  });
  const client = useQuery({
    queryKey: ['clients', 'one', sub.data?.client_id],
    queryFn: () => unwrap(api.GET('/api/v1/clients/{id}', { params: { path: { id: sub.data?.client_id as string } } })),
    enabled: Boolean(sub.data),
  });
  const invalidate = () => queryClient.invalidateQueries({ queryKey: ['subscriptions'] });
  const rotate = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/subscriptions/{id}/rotate-credentials', { params: { path: { id } } })),
    onSuccess: () => {
      void invalidate();
      notify(t('subscription.rotated'));
    },
    onError: (e) => notify(e.message, 'red'),
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/subscriptions/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void invalidate();
      void navigate({ to: '/subscriptions' });
    },
    onError: (e) => notify(e.message, 'red'),
  });
  if (sub.isError) return <Alert color="red">{sub.error.message}</Alert>;
  const s = sub.data;
  if (!s) return null;
  return (
    <>
      <PageHeader
        title={s.note || t('subscription.title')}
        subtitle={
          client.data && (
            <Link to="/subscriptions" search={{ client_id: s.client_id }}>
              {client.data.email}
            </Link>
          )
        }
        actions={
          can.write && (
            <>
              <Button
                variant="default"
                onClick={() =>
                  modals.openConfirmModal({
                    title: t('subscription.rotateTitle'),
                    children: <Text size="sm">{t('subscription.rotateBody')}</Text>,
                    labels: { confirm: t('subscription.rotate'), cancel: t('common.cancel') },
                    onConfirm: () => rotate.mutate(),
                  })
                }
              >
                {t('subscription.rotate')}
              </Button>
              <DeleteButton title={t('subscription.deleteTitle')} body={t('subscription.deleteBody')} onConfirm={() => remove.mutate()} />
            </>
          )
        }
      />
      <ReadOnlyNote />
      <Grid>
        <Grid.Col span={{ base: 12, md: 5 }}>
          <Card withBorder>
            <Title order={3} size="h5" mb="sm">
              {t('subscription.link')}
            </Title>
            {s.link ? (
              <Stack align="center" gap="sm">
                <QrCode value={s.link} label={t('subscription.qr')} />
                <Text className="svc-mono" dir="ltr" data-testid="subscription-link">
                  {s.link}
                </Text>
                <CopyButton value={s.link}>
                  {({ copied, copy }) => (
                    <Button variant="default" onClick={copy}>
                      {copied ? t('common.copied') : t('subscription.copyLink')}
                    </Button>
                  )}
                </CopyButton>
              </Stack>
            ) : (
              <Text size="sm" c="dimmed">
                {t('subscription.linkHidden')}
              </Text>
            )}
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 7 }}>
          <Card withBorder>
            <Group justify="space-between" mb="sm">
              <Title order={3} size="h5">
                {t('subscription.state')}
              </Title>
              <StatusBadge value={s.status} />
            </Group>
            <Stack gap="xs">
              <UsageBar s={s} />
              <Text size="sm">{t('subscription.periodStarted', { when: formatDateTime(lng, s.period_started_at) })}</Text>
              {s.credentials_rotated_at && (
                <Text size="sm">{t('subscription.rotatedAt', { when: formatDateTime(lng, s.credentials_rotated_at) })}</Text>
              )}
            </Stack>
            <SubscriptionSettings s={s} readOnly={!can.write} />
          </Card>
        </Grid.Col>
      </Grid>
      <SubscriptionDevicesCard id={s.id} canWrite={can.write} />
      <Card withBorder mt="md">
        <UsageHistory id={s.id} />
      </Card>
    </>
  );
}

interface Values {
  traffic_limit_bytes: number | null;
  device_limit: number | null;
  upload_bps: number | null;
  download_bps: number | null;
  expires_at: string;
  renewal: string;
  status: string;
  access_group_ids: string[];
  note: string;
}

const dateInput = (iso: string | null) => (iso ? new Date(iso).toISOString().slice(0, 10) : '');

function SubscriptionSettings({ s, readOnly }: { s: Subscription; readOnly: boolean }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const groups = useGroupOptions();
  const form = useForm<Values>({
    values: {
      traffic_limit_bytes: s.traffic_limit_bytes,
      device_limit: s.device_limit,
      upload_bps: s.upload_bps,
      download_bps: s.download_bps,
      expires_at: dateInput(s.expires_at),
      renewal: s.renewal,
      status: s.status === 'disabled' ? 'disabled' : 'active',
      access_group_ids: s.access_group_ids,
      note: s.note ?? '',
    },
    // The subscription is read again in the background (after any change to subscriptions, and
    // as its live state moves): what the operator has typed and not saved yet stays.
    resetOptions: { keepDirtyValues: true },
  });
  const { errors, isSubmitting, isDirty } = form.formState;
  const submit = form.handleSubmit(async (v) => {
    try {
      await unwrap(
        api.PATCH('/api/v1/subscriptions/{id}', {
          params: { path: { id: s.id } },
          body: {
            traffic_limit_bytes: v.traffic_limit_bytes,
            device_limit: v.device_limit,
            upload_bps: v.upload_bps,
            download_bps: v.download_bps,
            renewal: v.renewal as 'no_reset',
            status: v.status as 'active',
            access_group_ids: v.access_group_ids,
            note: v.note.trim() || null,
            ...(v.expires_at && v.expires_at !== dateInput(s.expires_at)
              ? { expires_at: new Date(`${v.expires_at}T23:59:59`).toISOString() }
              : {}),
          },
        }),
      );
      await queryClient.invalidateQueries({ queryKey: ['subscriptions'] });
      notify(t('common.saved'));
    } catch (err) {
      const message = showProblem(err, form.setError, [
        'traffic_limit_bytes',
        'device_limit',
        'upload_bps',
        'download_bps',
        'expires_at',
        'renewal',
        'status',
        'access_group_ids',
        'note',
      ]);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <fieldset disabled={readOnly} style={{ border: 0, padding: 0, margin: 0 }}>
        <Stack gap="sm" mt="md">
          <Controller
            control={form.control}
            name="traffic_limit_bytes"
            render={({ field }) => (
              <GibInput
                label={t('subscriptions.limit')}
                value={field.value}
                onChange={field.onChange}
                error={errors.traffic_limit_bytes?.message}
              />
            )}
          />
          <LiveLimitInputs
            deviceLimit={form.watch('device_limit')}
            uploadBps={form.watch('upload_bps')}
            downloadBps={form.watch('download_bps')}
            onChange={(patch) => {
              for (const [k, v] of Object.entries(patch)) form.setValue(k as 'device_limit', v, { shouldDirty: true });
            }}
            errors={{
              device_limit: errors.device_limit?.message,
              upload_bps: errors.upload_bps?.message,
              download_bps: errors.download_bps?.message,
            }}
          />
          <Group grow>
            <TextInput type="date" label={t('subscriptions.expires')} error={errors.expires_at?.message} {...form.register('expires_at')} />
            <Controller
              control={form.control}
              name="renewal"
              render={({ field }) => (
                <Select
                  label={t('subscriptions.renewal')}
                  allowDeselect={false}
                  value={field.value}
                  onChange={(v) => field.onChange(v ?? 'no_reset')}
                  data={['no_reset', 'day', 'week', 'month'].map((r) => ({ value: r, label: t(`subscriptions.renewals.${r}`) }))}
                />
              )}
            />
          </Group>
          <Controller
            control={form.control}
            name="status"
            render={({ field }) => (
              <Select
                label={t('fields.status')}
                allowDeselect={false}
                value={field.value}
                onChange={(v) => field.onChange(v ?? 'active')}
                data={[
                  { value: 'active', label: t('subscription.enabled') },
                  { value: 'disabled', label: t('status.disabled') },
                ]}
              />
            )}
          />
          <Controller
            control={form.control}
            name="access_group_ids"
            render={({ field }) => (
              <MultiSelect
                label={t('subscriptions.groups')}
                data={groups.data ?? []}
                value={field.value}
                onChange={field.onChange}
                searchable
              />
            )}
          />
          <TextInput label={t('fields.note')} {...form.register('note')} />
          {errors.root && (
            <Alert color="red" role="alert">
              {errors.root.message}
            </Alert>
          )}
          {!readOnly && (
            <Button type="submit" loading={isSubmitting} disabled={!isDirty}>
              {t('common.save')}
            </Button>
          )}
        </Stack>
      </fieldset>
    </form>
  );
}

const PRESETS = { '24h': [1, 'hour'], '7d': [7, 'hour'], '30d': [30, 'day'], '90d': [90, 'day'], '1y': [365, 'month'] } as const;

/** Traffic over a chosen range (presets or any from/to), hourly, daily or monthly. */
function UsageHistory({ id }: { id: string }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const [preset, setPreset] = useState<keyof typeof PRESETS | 'custom'>('7d');
  const [custom, setCustom] = useState({ from: '', to: '' });
  const range = useMemo(() => {
    if (preset === 'custom' && custom.from && custom.to) {
      const from = new Date(`${custom.from}T00:00:00`);
      const to = new Date(`${custom.to}T23:59:59`);
      const days = (to.getTime() - from.getTime()) / 86_400_000;
      return {
        from: from.toISOString(),
        to: to.toISOString(),
        granularity: (days <= 7 ? 'hour' : days <= 120 ? 'day' : 'month') as 'hour' | 'day' | 'month',
      };
    }
    const [days, granularity] = PRESETS[preset === 'custom' ? '7d' : preset];
    const to = new Date();
    return { from: new Date(to.getTime() - days * 86_400_000).toISOString(), to: to.toISOString(), granularity };
  }, [preset, custom]);
  const usage = useQuery({
    queryKey: ['subscriptions', 'usage', id, range],
    queryFn: () => unwrap(api.GET('/api/v1/subscriptions/{id}/usage', { params: { path: { id }, query: range } })),
  });
  const format = useCallback((v: number) => formatBytes(lng, v), [lng]);
  const chart = useMemo(() => {
    const items = usage.data?.items ?? [];
    return {
      times: items.map((i) => new Date(i.start).getTime() / 1000),
      series: [
        { label: t('subscription.uplink'), color: '#1a7ca7', values: items.map((i) => i.uplink_bytes) },
        { label: t('subscription.downlink'), color: '#e8590c', values: items.map((i) => i.downlink_bytes) },
      ],
    };
  }, [usage.data, t]);
  const total = (usage.data?.items ?? []).reduce((n, i) => n + i.uplink_bytes + i.downlink_bytes, 0);
  return (
    <>
      <Group justify="space-between" mb="sm" gap="sm">
        <Title order={3} size="h5">
          {t('subscription.usageHistory')}
        </Title>
        <Group gap="xs">
          <SegmentedControl
            size="xs"
            aria-label={t('dashboard.range')}
            value={preset}
            onChange={(v) => setPreset(v as typeof preset)}
            data={[
              ...Object.keys(PRESETS).map((p) => ({ value: p, label: t(`dashboard.ranges.${p}`) })),
              { value: 'custom', label: t('subscription.custom') },
            ]}
          />
          {preset === 'custom' && (
            <>
              <TextInput
                type="date"
                size="xs"
                aria-label={t('subscription.from')}
                value={custom.from}
                onChange={(e) => setCustom({ ...custom, from: e.currentTarget.value })}
              />
              <TextInput
                type="date"
                size="xs"
                aria-label={t('subscription.to')}
                value={custom.to}
                onChange={(e) => setCustom({ ...custom, to: e.currentTarget.value })}
              />
            </>
          )}
        </Group>
      </Group>
      <Text size="sm" mb="xs">
        {t('subscription.totalInRange', { total: formatBytes(lng, total) })}
      </Text>
      {usage.isError && <Alert color="red">{usage.error.message}</Alert>}
      {usage.data && usage.data.items.length === 0 ? (
        <Text c="dimmed" size="sm">
          {t('subscription.noUsage')}
        </Text>
      ) : (
        <UsageChart times={chart.times} series={chart.series} format={format} label={t('subscription.usageHistory')} />
      )}
      <UsageByNode id={id} from={range.from} to={range.to} />
    </>
  );
}

/**
 * Who used which node in the same range (an expensive node shows here): what it charged by
 * direction, and what the node carried (its raw bytes, before its traffic multiplier).
 */
function UsageByNode({ id, from, to }: { id: string; from: string; to: string }) {
  const { t, i18n } = useTranslation();
  const nodes = useQuery({
    queryKey: ['subscriptions', 'usage-nodes', id, from, to],
    queryFn: () => unwrap(api.GET('/api/v1/subscriptions/{id}/usage/nodes', { params: { path: { id }, query: { from, to } } })),
  });
  const items = nodes.data?.items ?? [];
  if (items.length === 0) return null;
  return (
    <Table mt="md" data-testid="usage-by-node" aria-label={t('subscription.usageByNode')}>
      <Table.Caption>{t('subscription.usageByNode')}</Table.Caption>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>{t('subscription.node')}</Table.Th>
          <Table.Th>{t('subscription.uplink')}</Table.Th>
          <Table.Th>{t('subscription.downlink')}</Table.Th>
          <Table.Th>{t('subscription.carried')}</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {items.map((n) => (
          <Table.Tr key={n.node_id}>
            <Table.Td>{n.node_name}</Table.Td>
            <Table.Td>{formatBytes(i18n.language, n.uplink_bytes)}</Table.Td>
            <Table.Td>{formatBytes(i18n.language, n.downlink_bytes)}</Table.Td>
            <Table.Td>{formatBytes(i18n.language, n.raw_uplink_bytes + n.raw_downlink_bytes)}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
