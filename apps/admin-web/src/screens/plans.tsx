import {
  Alert,
  Anchor,
  Badge,
  Button,
  Checkbox,
  Group,
  MultiSelect,
  NumberInput,
  Select,
  SimpleGrid,
  Stack,
  Textarea,
  TextInput,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { currencyExponent, formatMoney } from '@svc/format';
import { DataTable, formatBytes } from '@svc/web-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { GibInput } from '../components/bytes-input.tsx';
import { useCursorList } from '../components/cursor-list.ts';
import { DeleteButton } from '../components/delete-button.tsx';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { LiveLimitInputs } from '../components/limit-inputs.tsx';
import { useGroupOptions } from '../components/lookups.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { useCan } from '../me.tsx';

type Plan = AdminSchemas['Plan'];
const col = createColumnHelper<Plan>();

/** Plans customers buy: price, duration, traffic, reset, the access groups they grant. */
export function PlansScreen() {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const can = useCan();
  const list = useCursorList(['plans'], (cursor) =>
    unwrap(api.GET('/api/v1/plans', { params: { query: { ...(cursor ? { cursor } : {}), limit: 100 } } })),
  );
  const [creating, create] = useDisclosure(false);
  const [editing, setEditing] = useState<Plan | null>(null);
  const columns = useMemo(
    () => [
      col.accessor('name', {
        header: t('fields.name'),
        cell: (c) =>
          can.write ? (
            <Anchor component="button" type="button" onClick={() => setEditing(c.row.original)}>
              {c.getValue()}
            </Anchor>
          ) : (
            c.getValue()
          ),
      }),
      col.accessor('price', { header: t('plans.price'), cell: (c) => formatMoney(c.getValue(), c.row.original.currency, lng) }),
      col.accessor('duration_days', { header: t('plans.duration'), cell: (c) => t('plans.days', { count: c.getValue() }) }),
      col.accessor('traffic_limit_bytes', {
        header: t('subscriptions.limit'),
        cell: (c) => (c.getValue() == null ? '∞' : formatBytes(lng, c.getValue() as number)),
      }),
      col.accessor('renewal', { header: t('subscriptions.renewal'), cell: (c) => t(`subscriptions.renewals.${c.getValue()}`) }),
      col.accessor('archived', {
        header: t('fields.status'),
        cell: (c) =>
          c.getValue() ? (
            <Badge variant="dot" color="gray">
              {t('plans.archived')}
            </Badge>
          ) : (
            <Badge variant="dot" color="teal">
              {t('plans.onSale')}
            </Badge>
          ),
      }),
    ],
    [t, lng, can.write],
  );
  return (
    <>
      <PageHeader
        title={t('plans.title')}
        subtitle={t('plans.subtitle')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-plan">
              {t('plans.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <DataTable
        label={t('plans.title')}
        rows={list.rows}
        columns={columns}
        rowId={(p) => p.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('plans.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('plans.create')} size="lg">
        <PlanForm onSaved={create.close} />
      </Dialog>
      <Dialog opened={editing !== null} onClose={() => setEditing(null)} title={editing?.name ?? ''} size="lg">
        {editing && <PlanForm plan={editing} onSaved={() => setEditing(null)} />}
      </Dialog>
    </>
  );
}

interface Values {
  name: string;
  price: number | string;
  currency: string;
  duration_days: number | string;
  traffic_limit_bytes: number | null;
  device_limit: number | null;
  upload_bps: number | null;
  download_bps: number | null;
  description: string;
  renewal: string;
  access_group_ids: string[];
  archived: boolean;
}

function PlanForm({ plan, onSaved }: { plan?: Plan; onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const groups = useGroupOptions();
  const form = useForm<Values>({
    defaultValues: {
      name: plan?.name ?? '',
      price: plan ? plan.price / 10 ** currencyExponent(plan.currency) : 5,
      currency: plan?.currency ?? 'USD',
      duration_days: plan?.duration_days ?? 30,
      traffic_limit_bytes: plan?.traffic_limit_bytes ?? null,
      device_limit: plan?.device_limit ?? null,
      upload_bps: plan?.upload_bps ?? null,
      download_bps: plan?.download_bps ?? null,
      description: plan?.description ?? '',
      renewal: plan?.renewal ?? 'no_reset',
      access_group_ids: plan?.access_group_ids ?? [],
      archived: plan?.archived ?? false,
    },
  });
  const { errors, isSubmitting } = form.formState;
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/plans/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['plans'] });
      onSaved();
    },
  });
  const submit = form.handleSubmit(async (v) => {
    const currency = v.currency.trim().toUpperCase();
    const body = {
      name: v.name,
      currency,
      // Typed in major units (5.99), stored in minor units (599).
      price: Math.round(Number(v.price) * 10 ** currencyExponent(currency)),
      duration_days: Number(v.duration_days),
      traffic_limit_bytes: v.traffic_limit_bytes,
      device_limit: v.device_limit,
      upload_bps: v.upload_bps,
      download_bps: v.download_bps,
      // Empty: no description (null).
      description: v.description.trim() === '' ? null : v.description,
      renewal: v.renewal as Plan['renewal'],
      access_group_ids: v.access_group_ids,
      archived: v.archived,
    };
    try {
      if (plan) await unwrap(api.PATCH('/api/v1/plans/{id}', { params: { path: { id: plan.id } }, body }));
      else await unwrap(api.POST('/api/v1/plans', { body }));
      await queryClient.invalidateQueries({ queryKey: ['plans'] });
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, [
        'name',
        'price',
        'currency',
        'duration_days',
        'traffic_limit_bytes',
        'device_limit',
        'upload_bps',
        'download_bps',
        'description',
        'renewal',
        'access_group_ids',
        'archived',
      ]);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label={t('fields.name')}
          required
          error={errors.name?.message}
          {...form.register('name', { required: t('common.required') })}
        />
        <SimpleGrid cols={{ base: 1, xs: 3 }}>
          <Controller
            control={form.control}
            name="price"
            render={({ field }) => (
              <NumberInput
                label={t('plans.price')}
                required
                min={0}
                decimalScale={2}
                value={field.value}
                onChange={field.onChange}
                error={errors.price?.message}
              />
            )}
          />
          <TextInput
            label={t('plans.currency')}
            description="ISO 4217"
            required
            maxLength={3}
            error={errors.currency?.message}
            {...form.register('currency', { required: t('common.required') })}
          />
          <Controller
            control={form.control}
            name="duration_days"
            render={({ field }) => (
              <NumberInput
                label={t('plans.duration')}
                suffix={` ${t('plans.daysUnit')}`}
                required
                min={1}
                value={field.value}
                onChange={field.onChange}
                error={errors.duration_days?.message}
              />
            )}
          />
        </SimpleGrid>
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
        <Textarea
          label={t('plans.description')}
          description={t('plans.descriptionHint')}
          autosize
          minRows={2}
          maxRows={6}
          maxLength={1000}
          error={errors.description?.message}
          {...form.register('description')}
        />
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
              error={errors.access_group_ids?.message}
            />
          )}
        />
        <Controller
          control={form.control}
          name="archived"
          render={({ field }) => (
            <Checkbox
              label={t('plans.archive')}
              description={t('plans.archiveHint')}
              checked={field.value}
              onChange={(e) => field.onChange(e.currentTarget.checked)}
            />
          )}
        />
        {errors.root && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Group justify="space-between">
          {plan ? (
            <DeleteButton
              title={t('plans.deleteTitle', { name: plan.name })}
              body={t('plans.deleteBody')}
              onConfirm={() => remove.mutate(plan.id)}
            />
          ) : (
            <span />
          )}
          <Button type="submit" loading={isSubmitting}>
            {plan ? t('common.save') : t('common.create')}
          </Button>
        </Group>
        {remove.isError && <Alert color="red">{remove.error.message}</Alert>}
      </Stack>
    </form>
  );
}
