import { Badge, Button, Group, Select, Text, TextInput } from '@mantine/core';
import { modals } from '@mantine/modals';
import type { AdminSchemas } from '@svc/api-client';
import { formatMoney } from '@svc/format';
import { DataTable, formatDateTime } from '@svc/web-ui';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { AnchorLink } from '../components/anchor-link.tsx';
import { useCursorList } from '../components/cursor-list.ts';
import { ListBar, SearchBox, sortParam, sortState } from '../components/list-search.tsx';
import { notify } from '../components/notify.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { PAYMENT_SORTS } from '../list-sorts.ts';
import { useCan } from '../me.tsx';

type Payment = AdminSchemas['Payment'];
const col = createColumnHelper<Payment>();
const STATUSES = ['pending', 'succeeded', 'failed', 'expired', 'canceled', 'refunded'] as const;
const COLORS: Record<string, string> = {
  pending: 'yellow',
  succeeded: 'teal',
  failed: 'red',
  expired: 'gray',
  canceled: 'gray',
  refunded: 'orange',
};

export interface PaymentsSearch {
  status?: Payment['status'] | undefined;
  q?: string | undefined;
  /** Default: newest first. */
  sort?: string | undefined;
  /** Created on or after this day, before the end of `to` (yyyy-mm-dd, the browser's days). */
  from?: string | undefined;
  to?: string | undefined;
}

/** Payments, newest first; manual ones are confirmed, canceled or refunded here (docs/payments.md). */
export function PaymentsScreen({ search, setSearch }: { search: PaymentsSearch; setSearch: (s: PaymentsSearch) => void }) {
  const { t, i18n } = useTranslation();
  const lng = i18n.language;
  const can = useCan();
  const queryClient = useQueryClient();
  const sort = search.sort ?? '-created';
  const query = {
    ...(search.status ? { status: search.status } : {}),
    ...(search.q ? { q: search.q } : {}),
    ...(search.from ? { from: new Date(`${search.from}T00:00:00`).toISOString() } : {}),
    ...(search.to ? { to: new Date(`${search.to}T23:59:59.999`).toISOString() } : {}),
    sort: sort as 'created',
  };
  const list = useCursorList(['payments', query], (cursor) =>
    unwrap(api.GET('/api/v1/payments', { params: { query: { ...query, ...(cursor ? { cursor } : {}), limit: 100 } } })),
  );
  const providers = useQuery({
    queryKey: ['payment-providers', 'options'],
    queryFn: () => unwrap(api.GET('/api/v1/payment-providers', { params: { query: { limit: 200 } } })),
    select: (p) => new Map(p.items.map((x) => [x.id, x])),
  });
  const settle = useMutation({
    mutationFn: ({ id, action }: { id: string; action: 'confirm' | 'cancel' | 'refund' }) =>
      action === 'confirm'
        ? unwrap(api.POST('/api/v1/payments/{id}/confirm', { params: { path: { id } } }))
        : action === 'cancel'
          ? unwrap(api.POST('/api/v1/payments/{id}/cancel', { params: { path: { id } } }))
          : unwrap(api.POST('/api/v1/payments/{id}/refund', { params: { path: { id } } })),
    onSuccess: (p) => {
      void queryClient.invalidateQueries({ queryKey: ['payments'] });
      notify(t('payments.now', { status: t(`payments.statuses.${p.status}`) }));
    },
    onError: (e) => notify(e.message, 'red'),
  });
  const ask = (p: Payment, action: 'confirm' | 'cancel' | 'refund') =>
    modals.openConfirmModal({
      title: t(`payments.${action}Title`, { amount: formatMoney(p.amount, p.currency, lng), email: p.client_email }),
      children: <Text size="sm">{t(`payments.${action}Body`)}</Text>,
      labels: { confirm: t(`payments.${action}`), cancel: t('common.cancel') },
      confirmProps: action === 'confirm' ? {} : { color: 'red' },
      onConfirm: () => settle.mutate({ id: p.id, action }),
    });
  const columns = useMemo(
    () => [
      col.accessor('created_at', { header: t('fields.created'), cell: (c) => formatDateTime(lng, c.getValue()) }),
      col.accessor('client_email', { header: t('fields.email') }),
      col.accessor('amount', { header: t('payments.amount'), cell: (c) => formatMoney(c.getValue(), c.row.original.currency, lng) }),
      col.accessor('status', {
        header: t('fields.status'),
        cell: (c) => (
          <Badge variant="dot" color={COLORS[c.getValue()] ?? 'gray'}>
            {t(`payments.statuses.${c.getValue()}`)}
          </Badge>
        ),
      }),
      col.accessor('provider_id', { header: t('payments.provider'), cell: (c) => providers.data?.get(c.getValue())?.name ?? c.getValue() }),
      col.accessor('subscription_id', {
        header: t('subscriptions.subscription'),
        cell: (c) =>
          c.getValue() ? (
            <AnchorLink to="/subscriptions/$id" params={{ id: c.getValue() as string }} size="sm" className="svc-mono">
              {c.getValue()}
            </AnchorLink>
          ) : (
            '—'
          ),
      }),
      col.display({
        id: 'actions',
        header: () => <span className="sr-only">{t('common.actions')}</span>,
        cell: (c) => {
          const p = c.row.original;
          const manual = providers.data?.get(p.provider_id)?.kind === 'manual';
          if (!can.write || !manual) return null;
          return (
            <Group gap={4} wrap="nowrap">
              {p.status === 'pending' && (
                <>
                  <Button size="compact-xs" onClick={() => ask(p, 'confirm')}>
                    {t('payments.confirm')}
                  </Button>
                  <Button size="compact-xs" variant="light" color="red" onClick={() => ask(p, 'cancel')}>
                    {t('payments.cancel')}
                  </Button>
                </>
              )}
              {p.status === 'succeeded' && (
                <Button size="compact-xs" variant="light" color="red" onClick={() => ask(p, 'refund')}>
                  {t('payments.refund')}
                </Button>
              )}
            </Group>
          );
        },
      }),
    ],
    [t, lng, providers.data, can.write],
  );
  return (
    <>
      <PageHeader title={t('payments.title')} subtitle={t('payments.subtitle')} />
      <ReadOnlyNote />
      <ListBar total={list.total} exact={list.totalExact}>
        <SearchBox label={t('payments.search')} value={search.q} onSearch={(q) => setSearch({ ...search, q })} />
        <Select
          aria-label={t('fields.status')}
          placeholder={t('fields.status')}
          clearable
          w={200}
          value={search.status ?? null}
          onChange={(v) => setSearch({ ...search, status: (v as Payment['status']) ?? undefined })}
          data={STATUSES.map((s) => ({ value: s, label: t(`payments.statuses.${s}`) }))}
        />
        <TextInput
          type="date"
          label={t('subscription.from')}
          value={search.from ?? ''}
          onChange={(e) => setSearch({ ...search, from: e.currentTarget.value || undefined })}
        />
        <TextInput
          type="date"
          label={t('subscription.to')}
          value={search.to ?? ''}
          onChange={(e) => setSearch({ ...search, to: e.currentTarget.value || undefined })}
        />
      </ListBar>
      <DataTable
        label={t('payments.title')}
        rows={list.rows}
        columns={columns}
        rowId={(p) => p.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={search.q ? t('list.noMatch') : t('payments.empty')}
        sortable={Object.keys(PAYMENT_SORTS)}
        sort={sortState(sort, PAYMENT_SORTS)}
        onSort={(s) => setSearch({ ...search, sort: sortParam(s, PAYMENT_SORTS) })}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
    </>
  );
}
