import { Alert, Button, Group, MultiSelect, Progress, Select, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatBytes, formatDate } from '@svc/web-ui';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { createColumnHelper } from '@tanstack/react-table';
import { useEffect, useMemo } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { AnchorLink } from '../components/anchor-link.tsx';
import { ListBulkActions, selectColumn, useRowSelection } from '../components/bulk-actions.tsx';
import { GibInput } from '../components/bytes-input.tsx';
import { useCursorList } from '../components/cursor-list.ts';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { ListBar, SearchBox, sortParam, sortState } from '../components/list-search.tsx';
import { useGroupOptions } from '../components/lookups.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { SUBSCRIPTION_SORTS } from '../list-sorts.ts';
import { useCan } from '../me.tsx';
import { useSubscriptionBulk } from './subscriptions-bulk.tsx';

type Subscription = AdminSchemas['Subscription'];
const col = createColumnHelper<Subscription>();

export interface SubscriptionsSearch {
  status?: Subscription['status'] | undefined;
  client_id?: string | undefined;
  q?: string | undefined;
  sort?: string | undefined;
  create?: boolean | undefined;
}

export function UsageBar({ s }: { s: Subscription }) {
  const { i18n } = useTranslation();
  const lng = i18n.language;
  if (s.traffic_limit_bytes == null) return <Text size="sm">{formatBytes(lng, s.used_bytes)} / ∞</Text>;
  const pct = s.traffic_limit_bytes === 0 ? 100 : Math.min(100, (s.used_bytes / s.traffic_limit_bytes) * 100);
  return (
    <Stack gap={2} miw={140}>
      <Text size="xs">
        {formatBytes(lng, s.used_bytes)} / {formatBytes(lng, s.traffic_limit_bytes)}
      </Text>
      <Progress value={pct} color={pct >= 100 ? 'red' : pct > 80 ? 'orange' : 'brand'} size="sm" aria-hidden="true" />
    </Stack>
  );
}

/** Subscriptions: status, usage against the limit, expiry; a row opens the subscription. */
export function SubscriptionsScreen({ search, setSearch }: { search: SubscriptionsSearch; setSearch: (s: SubscriptionsSearch) => void }) {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const navigate = useNavigate();
  const { create: _create, ...filters } = search;
  const list = useCursorList(['subscriptions', filters], (cursor) =>
    unwrap(
      api.GET('/api/v1/subscriptions', {
        params: { query: { ...filters, sort: filters.sort as 'created' | undefined, ...(cursor ? { cursor } : {}), limit: 100 } },
      }),
    ),
  );
  // What a bulk action takes by filter: the list's filter and search, not its order.
  const scope = { status: search.status, client_id: search.client_id, q: search.q };
  const sel = useRowSelection(list.rows, (s: Subscription) => s.id, scope);
  const bulk = useSubscriptionBulk();
  const [creating, create] = useDisclosure(Boolean(search.create) && can.write);
  const client = useQuery({
    queryKey: ['clients', 'one', search.client_id],
    queryFn: () => unwrap(api.GET('/api/v1/clients/{id}', { params: { path: { id: search.client_id as string } } })),
    enabled: Boolean(search.client_id),
  });
  const columns = useMemo(
    () => [
      ...(can.write ? [selectColumn(sel, (s: Subscription) => s.note || s.id, t)] : []),
      col.accessor('id', {
        header: t('subscriptions.subscription'),
        cell: (c) => (
          <AnchorLink to="/subscriptions/$id" params={{ id: c.getValue() }} onClick={(e) => e.stopPropagation()} className="svc-mono">
            {c.row.original.note || c.getValue()}
          </AnchorLink>
        ),
      }),
      col.accessor('status', { header: t('fields.status'), cell: (c) => <StatusBadge value={c.getValue()} /> }),
      col.display({ id: 'usage', header: t('subscriptions.usage'), cell: (c) => <UsageBar s={c.row.original} /> }),
      col.accessor('expires_at', { header: t('subscriptions.expires'), cell: (c) => formatDate(i18n.language, c.getValue()) }),
      col.accessor('renewal', { header: t('subscriptions.renewal'), cell: (c) => t(`subscriptions.renewals.${c.getValue()}`) }),
    ],
    [t, i18n.language, can.write, sel],
  );
  return (
    <>
      <PageHeader
        title={t('subscriptions.title')}
        subtitle={client.data ? t('subscriptions.ofClient', { email: client.data.email }) : undefined}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-subscription">
              {t('subscriptions.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <ListBar total={list.total} exact={list.totalExact}>
        <SearchBox label={t('subscriptions.search')} value={search.q} onSearch={(q) => setSearch({ ...filters, q })} />
        <Select
          aria-label={t('fields.status')}
          placeholder={t('fields.status')}
          clearable
          w={200}
          value={search.status ?? null}
          onChange={(v) => setSearch({ ...filters, status: (v as Subscription['status']) ?? undefined })}
          data={['active', 'limited', 'expired', 'disabled'].map((v) => ({ value: v, label: t(`status.${v}`) }))}
        />
        {search.client_id && (
          <Button variant="subtle" size="xs" onClick={() => setSearch({ ...filters, client_id: undefined })}>
            {t('subscriptions.allClients')}
          </Button>
        )}
      </ListBar>
      {can.write && <ListBulkActions sel={sel} list={list} scope={scope} bulk={bulk} />}
      <DataTable
        label={t('subscriptions.title')}
        rows={list.rows}
        columns={columns}
        rowId={(s) => s.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        onRowClick={(s) => navigate({ to: '/subscriptions/$id', params: { id: s.id } })}
        selected={can.write ? sel.isSelected : undefined}
        empty={search.q ? t('list.noMatch') : t('subscriptions.empty')}
        sortable={Object.keys(SUBSCRIPTION_SORTS)}
        sort={sortState(search.sort, SUBSCRIPTION_SORTS)}
        onSort={(s) => setSearch({ ...filters, sort: sortParam(s, SUBSCRIPTION_SORTS) })}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog
        opened={creating}
        onClose={() => {
          create.close();
          if (search.create) setSearch(filters);
        }}
        title={t('subscriptions.create')}
      >
        <CreateSubscriptionForm
          clientId={search.client_id}
          clientEmail={client.data?.email}
          onCreated={(s) => navigate({ to: '/subscriptions/$id', params: { id: s.id } })}
        />
      </Dialog>
    </>
  );
}

interface Values {
  client_email: string;
  access_group_ids: string[];
  traffic_limit_bytes: number | null;
  expires_at: string;
  renewal: string;
  note: string;
}

function CreateSubscriptionForm({
  clientId,
  clientEmail,
  onCreated,
}: {
  clientId: string | undefined;
  clientEmail: string | undefined;
  onCreated: (s: Subscription) => void;
}) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const groups = useGroupOptions();
  const form = useForm<Values>({
    defaultValues: {
      client_email: clientEmail ?? '',
      access_group_ids: [],
      traffic_limit_bytes: null,
      expires_at: '',
      renewal: 'no_reset',
      note: '',
    },
  });
  useEffect(() => {
    if (clientEmail && !form.getValues('client_email')) form.setValue('client_email', clientEmail);
  }, [clientEmail, form]);
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async (v) => {
    try {
      let id = clientId && v.client_email === clientEmail ? clientId : undefined;
      if (!id) {
        const found = await unwrap(api.GET('/api/v1/clients', { params: { query: { email: v.client_email.trim(), limit: 1 } } }));
        id = found.items[0]?.id;
        if (!id) {
          form.setError('client_email', { message: t('subscriptions.noSuchClient') });
          return;
        }
      }
      const created = await unwrap(
        api.POST('/api/v1/subscriptions', {
          body: {
            client_id: id,
            access_group_ids: v.access_group_ids,
            traffic_limit_bytes: v.traffic_limit_bytes,
            renewal: v.renewal as 'no_reset',
            note: v.note.trim() || null,
            ...(v.expires_at ? { expires_at: new Date(`${v.expires_at}T23:59:59`).toISOString() } : {}),
          },
        }),
      );
      await queryClient.invalidateQueries({ queryKey: ['subscriptions'] });
      onCreated(created);
    } catch (err) {
      const message = showProblem(err, form.setError, ['access_group_ids', 'traffic_limit_bytes', 'expires_at', 'renewal', 'note']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          type="email"
          label={t('subscriptions.client')}
          required
          error={errors.client_email?.message}
          {...form.register('client_email', { required: t('common.required') })}
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
        <Group grow>
          <TextInput
            type="date"
            label={t('subscriptions.expires')}
            description={t('subscriptions.expiresHint')}
            error={errors.expires_at?.message}
            {...form.register('expires_at')}
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
        </Group>
        <Textarea label={t('fields.note')} autosize minRows={1} {...form.register('note')} />
        {errors.root && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Button type="submit" loading={isSubmitting}>
          {t('common.create')}
        </Button>
      </Stack>
    </form>
  );
}
