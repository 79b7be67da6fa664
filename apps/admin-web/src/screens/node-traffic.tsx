import { Alert, Button, Card, NumberInput, Progress, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import type { AdminSchemas } from '@svc/api-client';
import { formatBytes, formatDateTime, formatNumber } from '@svc/web-ui';
import { useQueryClient } from '@tanstack/react-query';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { GibInput } from '../components/bytes-input.tsx';
import { showProblem } from '../components/form-errors.ts';
import { notify } from '../components/notify.ts';

type Node = AdminSchemas['Node'];
type Renewal = Node['traffic_quota_renewal'];
const RENEWALS: Renewal[] = ['no_reset', 'day', 'week', 'month'];

/**
 * Shown while the node is limited by its traffic quota: since when, that its inbounds are out of
 * service and out of the links, and what brings them back.
 */
export function NodeLimitedAlert({ node }: { node: Node }) {
  const { t, i18n } = useTranslation();
  const since = node.traffic.limited_since;
  if (!since) return null;
  const lng = i18n.language;
  return (
    <Alert color="red" mb="md" title={t('node.limitedTitle')} data-testid="node-limited">
      <Text size="sm">
        {node.traffic.resets_at
          ? t('node.limitedBody', { since: formatDateTime(lng, since), resets: formatDateTime(lng, node.traffic.resets_at) })
          : t('node.limitedBodyNoReset', { since: formatDateTime(lng, since) })}
      </Text>
    </Alert>
  );
}

/** The node's traffic: its multiplier, this period's usage against its quota, when it resets, and what it carried and charged in all. */
export function NodeTrafficCard({ node }: { node: Node }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const tr = node.traffic;
  const quota = node.traffic_quota_bytes;
  const pct = quota == null ? 0 : quota === 0 ? 100 : Math.min(100, (tr.period_bytes / quota) * 100);
  return (
    <Card withBorder data-testid="node-traffic">
      <Title order={3} size="h5" mb="sm">
        {t('node.traffic')}
      </Title>
      <Table>
        <Table.Tbody>
          <Row label={t('node.multiplier')}>{t('node.multiplierValue', { value: formatNumber(lng, node.traffic_multiplier) })}</Row>
          <Row label={t('node.quota')}>
            {quota == null ? (
              <Text size="sm">
                {t('node.noQuota')} · {t('node.periodUsage', { used: formatBytes(lng, tr.period_bytes) })}
              </Text>
            ) : (
              <Stack gap={2}>
                <Text size="sm">
                  {t('node.periodUsageOf', { used: formatBytes(lng, tr.period_bytes), quota: formatBytes(lng, quota) })}
                </Text>
                <Progress value={pct} color={pct >= 100 ? 'red' : pct > 80 ? 'orange' : 'brand'} size="sm" aria-hidden="true" />
              </Stack>
            )}
          </Row>
          <Row label={t('node.quotaRenewal')}>{t(`subscriptions.renewals.${node.traffic_quota_renewal}`)}</Row>
          <Row label={t('node.periodStarted')}>{formatDateTime(lng, tr.period_started_at)}</Row>
          <Row label={t('node.resetsAt')}>{formatDateTime(lng, tr.resets_at)}</Row>
          <Row label={t('node.carried')}>{formatBytes(lng, tr.total_raw_bytes)}</Row>
          <Row label={t('node.charged')}>{formatBytes(lng, tr.total_charged_bytes)}</Row>
        </Table.Tbody>
      </Table>
    </Card>
  );
}

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th scope="row" w="40%">
        {label}
      </Table.Th>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}

interface Values {
  name: string;
  address: string;
  traffic_multiplier: number | string;
  traffic_quota_bytes: number | null;
  traffic_quota_renewal: Renewal;
}

/**
 * The node's settings (PATCH /nodes/{id}): name, address, traffic multiplier, quota and its
 * renewal. The server's rules (ranges, four decimals) come back onto the fields.
 */
export function NodeSettingsForm({ node, onSaved }: { node: Node; onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<Values>({
    defaultValues: {
      name: node.name,
      address: node.address,
      traffic_multiplier: node.traffic_multiplier,
      traffic_quota_bytes: node.traffic_quota_bytes,
      traffic_quota_renewal: node.traffic_quota_renewal,
    },
  });
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async (v) => {
    try {
      await unwrap(
        api.PATCH('/api/v1/nodes/{id}', {
          params: { path: { id: node.id } },
          body: {
            name: v.name,
            address: v.address,
            traffic_multiplier: Number(v.traffic_multiplier),
            traffic_quota_bytes: v.traffic_quota_bytes,
            traffic_quota_renewal: v.traffic_quota_renewal,
          },
        }),
      );
      await queryClient.invalidateQueries({ queryKey: ['nodes'] });
      notify(t('common.saved'));
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, [
        'name',
        'address',
        'traffic_multiplier',
        'traffic_quota_bytes',
        'traffic_quota_renewal',
      ]);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate data-testid="node-settings">
      <Stack>
        <TextInput
          label={t('fields.name')}
          required
          error={errors.name?.message}
          {...form.register('name', { required: t('common.required') })}
        />
        <TextInput
          label={t('nodes.address')}
          description={t('nodes.addressHint')}
          required
          error={errors.address?.message}
          {...form.register('address', { required: t('common.required') })}
        />
        <Controller
          control={form.control}
          name="traffic_multiplier"
          render={({ field }) => (
            <NumberInput
              label={t('node.multiplier')}
              description={t('node.multiplierHint')}
              min={0}
              max={100}
              step={0.1}
              decimalScale={4}
              value={field.value}
              onChange={field.onChange}
              error={errors.traffic_multiplier?.message}
            />
          )}
        />
        <Controller
          control={form.control}
          name="traffic_quota_bytes"
          render={({ field }) => (
            <GibInput label={t('node.quota')} value={field.value} onChange={field.onChange} error={errors.traffic_quota_bytes?.message} />
          )}
        />
        <Text size="xs" c="dimmed">
          {t('node.quotaHint')}
        </Text>
        <Controller
          control={form.control}
          name="traffic_quota_renewal"
          render={({ field }) => (
            <Select
              label={t('node.quotaRenewal')}
              allowDeselect={false}
              value={field.value}
              onChange={(v) => field.onChange((v ?? 'month') as Renewal)}
              data={RENEWALS.map((r) => ({ value: r, label: t(`subscriptions.renewals.${r}`) }))}
              error={errors.traffic_quota_renewal?.message}
            />
          )}
        />
        {errors.root && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Button type="submit" loading={isSubmitting}>
          {t('common.save')}
        </Button>
      </Stack>
    </form>
  );
}
