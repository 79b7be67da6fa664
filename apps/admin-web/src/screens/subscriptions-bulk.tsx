import { Group, MultiSelect, NumberInput, Select, Stack, Text } from '@mantine/core';
import type { AdminSchemas } from '@svc/api-client';
import { formatBytes, formatDate } from '@svc/web-ui';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import type { BulkAction, BulkActionDef, BulkTarget } from '../components/bulk-actions.tsx';
import { BytesInput } from '../components/bytes-input.tsx';
import { nameOf, useGroupOptions } from '../components/lookups.ts';
import { StatusBadge } from '../components/status-badge.tsx';

type Subscription = AdminSchemas['Subscription'];
type SubscriptionBulk = AdminSchemas['SubscriptionBulk'];

/** The subscriptions list's bulk actions (POST /api/v1/subscriptions/bulk) and how its dry run is shown. */
export function useSubscriptionBulk(): { actions: BulkActionDef[]; target: BulkTarget<Subscription> } {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const groups = useGroupOptions();
  const actions: BulkActionDef[] = [
    {
      type: 'extend_expiry',
      label: t('bulk.sub.extend'),
      initial: { type: 'extend_expiry', days: 30 },
      inputs: (a, set) => (
        <NumberInput
          label={t('bulk.sub.days')}
          description={t('bulk.sub.daysHint')}
          min={1}
          max={3650}
          allowDecimal={false}
          value={(a.days as number | undefined) ?? ''}
          onChange={(v) => set({ ...a, days: v === '' ? undefined : Number(v) })}
          data-testid="bulk-days"
        />
      ),
      valid: (a) => Number.isInteger(a.days) && (a.days as number) >= 1 && (a.days as number) <= 3650,
      describe: (a) => t('bulk.sub.extendDescribe', { count: a.days as number }),
    },
    {
      type: 'add_traffic',
      label: t('bulk.sub.addTraffic'),
      initial: { type: 'add_traffic', bytes: undefined },
      inputs: (a, set) => (
        <BytesInput
          label={t('bulk.sub.amount')}
          unitLabel={t('bulk.sub.unit')}
          value={(a.bytes as number | undefined) ?? null}
          onChange={(bytes) => set({ ...a, bytes: bytes ?? undefined })}
        />
      ),
      valid: (a) => typeof a.bytes === 'number' && a.bytes > 0,
      describe: (a) => t('bulk.sub.addDescribe', { amount: formatBytes(lng, a.bytes as number) }),
    },
    {
      type: 'set_traffic',
      label: t('bulk.sub.setTraffic'),
      initial: { type: 'set_traffic', traffic_limit_bytes: null },
      inputs: (a, set) => <SetTraffic action={a} set={set} />,
      valid: (a) => a.traffic_limit_bytes === null || (typeof a.traffic_limit_bytes === 'number' && a.traffic_limit_bytes > 0),
      describe: (a) =>
        a.traffic_limit_bytes === null
          ? t('bulk.sub.setUnlimitedDescribe')
          : t('bulk.sub.setDescribe', { amount: formatBytes(lng, a.traffic_limit_bytes as number) }),
    },
    {
      type: 'reset_usage',
      label: t('bulk.sub.resetUsage'),
      initial: { type: 'reset_usage' },
      describe: () => t('bulk.sub.resetDescribe'),
    },
    {
      type: 'set_status',
      label: t('bulk.sub.setStatus'),
      initial: { type: 'set_status', status: 'disabled' },
      inputs: (a, set) => (
        <Select
          label={t('fields.status')}
          allowDeselect={false}
          value={a.status as string}
          onChange={(v) => set({ ...a, status: v ?? 'active' })}
          data={['active', 'disabled'].map((v) => ({ value: v, label: t(`status.${v}`) }))}
        />
      ),
      describe: (a) => t('bulk.sub.statusDescribe', { status: t(`status.${a.status as string}`) }),
    },
    {
      type: 'set_access_groups',
      label: t('bulk.sub.setGroups'),
      initial: { type: 'set_access_groups', access_group_ids: [] },
      inputs: (a, set) => (
        <MultiSelect
          label={t('subscriptions.groups')}
          description={t('bulk.sub.groupsHint')}
          data={groups.data ?? []}
          value={a.access_group_ids as string[]}
          onChange={(v) => set({ ...a, access_group_ids: v })}
          searchable
          comboboxProps={{ withinPortal: true }}
        />
      ),
      describe: (a) => {
        const ids = a.access_group_ids as string[];
        return ids.length === 0
          ? t('bulk.sub.groupsNoneDescribe')
          : t('bulk.sub.groupsDescribe', { groups: ids.map((id) => nameOf(groups.data, id)).join(', ') });
      },
    },
    {
      type: 'rotate_credentials',
      label: t('bulk.sub.rotate'),
      danger: t('bulk.sub.rotateUnderstood'),
      initial: { type: 'rotate_credentials' },
      describe: () => t('bulk.sub.rotateDescribe'),
    },
    {
      type: 'delete',
      label: t('common.delete'),
      danger: t('bulk.sub.deleteUnderstood'),
      initial: { type: 'delete' },
      describe: () => t('bulk.sub.deleteDescribe'),
    },
  ];
  const target: BulkTarget<Subscription> = {
    list: 'subscriptions',
    willChange: (count) => t('bulk.sub.willChange', { count }),
    skippedHint: t('bulk.sub.skippedHint'),
    post: (body) => unwrap(api.POST('/api/v1/subscriptions/bulk', { body: body as SubscriptionBulk })),
    sampleId: (s) => s.id,
    sampleLabel: (s) => (
      <Group gap="xs" wrap="wrap" component="span">
        <Text span size="sm" className="svc-mono">
          {s.note || s.id}
        </Text>
        <StatusBadge value={s.status} />
        <Text span size="sm" c="dimmed">
          {t('bulk.sub.sampleExpires', { date: formatDate(lng, s.expires_at) })}
        </Text>
      </Group>
    ),
  };
  return { actions, target };
}

/** Set traffic: unlimited, or a limit with its unit. */
function SetTraffic({ action, set }: { action: BulkAction; set: (a: BulkAction) => void }) {
  const { t } = useTranslation();
  const [limited, setLimited] = useState(action.traffic_limit_bytes !== null);
  return (
    <Stack gap="xs">
      <Select
        label={t('subscriptions.limit')}
        allowDeselect={false}
        value={limited ? 'limit' : 'none'}
        onChange={(v) => {
          setLimited(v === 'limit');
          set({ ...action, traffic_limit_bytes: v === 'limit' ? undefined : null });
        }}
        data={[
          { value: 'none', label: t('subscriptions.unlimited') },
          { value: 'limit', label: t('subscriptions.limited') },
        ]}
      />
      {limited && (
        <BytesInput
          label={t('bulk.sub.amount')}
          unitLabel={t('bulk.sub.unit')}
          value={typeof action.traffic_limit_bytes === 'number' ? action.traffic_limit_bytes : null}
          onChange={(bytes) => set({ ...action, traffic_limit_bytes: bytes ?? undefined })}
        />
      )}
    </Stack>
  );
}
