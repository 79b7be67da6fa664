import { Button, Code, Group, Popover, Select, Text, TextInput } from '@mantine/core';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatDateTime } from '@svc/web-ui';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { AnchorLink } from '../components/anchor-link.tsx';
import { useCursorList } from '../components/cursor-list.ts';
import { ListBar, SearchBox, sortParam, sortState } from '../components/list-search.tsx';
import { PageHeader } from '../components/page-header.tsx';
import { AUDIT_SORTS } from '../list-sorts.ts';

type Entry = AdminSchemas['AuditEntry'];
const col = createColumnHelper<Entry>();

export interface AuditSearch {
  actor_id?: string | undefined;
  entity_type?: string | undefined;
  entity_id?: string | undefined;
  from?: string | undefined;
  q?: string | undefined;
  /** Default: newest first. */
  sort?: string | undefined;
  to?: string | undefined;
}

export const AUDIT_ENTITY_TYPES = [
  'node',
  'inbound_profile',
  'inbound',
  'access_group',
  'chain',
  'certificate',
  'dns_provider',
  'acme_account',
  'client',
  'subscription',
  'plan',
  'payment_provider',
  'payment',
  'webhook',
  'admin',
  'settings',
  'session',
];

/** The audit log, newest first, filtered by actor, entity and time (the filters live in the URL). */
export function AuditLogScreen({ search, setSearch }: { search: AuditSearch; setSearch: (s: AuditSearch) => void }) {
  const { t, i18n } = useTranslation();
  const query = {
    ...(search.actor_id ? { actor_id: search.actor_id } : {}),
    ...(search.entity_type ? { entity_type: search.entity_type } : {}),
    ...(search.entity_id ? { entity_id: search.entity_id } : {}),
    ...(search.from ? { from: new Date(`${search.from}T00:00:00`).toISOString() } : {}),
    ...(search.to ? { to: new Date(`${search.to}T23:59:59.999`).toISOString() } : {}),
    ...(search.q ? { q: search.q } : {}),
    ...(search.sort ? { sort: search.sort as 'created' } : {}),
  };
  const list = useCursorList(['audit-log', query], (cursor) =>
    unwrap(api.GET('/api/v1/audit-log', { params: { query: { ...query, ...(cursor ? { cursor } : {}), limit: 100 } } })),
  );
  const [draft, setDraft] = useState({ actor_id: search.actor_id ?? '', entity_id: search.entity_id ?? '' });
  const columns = useMemo(
    () => [
      col.accessor('at', { header: t('audit.at'), cell: (c) => formatDateTime(i18n.language, c.getValue()) }),
      col.accessor('actor_type', {
        header: t('audit.actor'),
        cell: (c) => (
          <Text size="sm">
            {t(`audit.actors.${c.getValue()}`)}
            {c.row.original.actor_id && (
              <>
                {' '}
                <span className="svc-mono">{c.row.original.actor_id}</span>
              </>
            )}
          </Text>
        ),
      }),
      col.accessor('action', { header: t('audit.action'), cell: (c) => <span className="svc-mono">{c.getValue()}</span> }),
      col.display({ id: 'entity', header: t('audit.entity'), cell: (c) => <EntityLink entry={c.row.original} /> }),
      col.accessor('ip', { header: t('audit.ip'), cell: (c) => c.getValue() ?? '—' }),
      col.accessor('details', {
        header: t('audit.details'),
        cell: (c) =>
          c.getValue() ? (
            <Popover width={360} position="bottom-end" withinPortal>
              <Popover.Target>
                <Button size="compact-xs" variant="subtle">
                  {t('audit.show')}
                </Button>
              </Popover.Target>
              <Popover.Dropdown>
                <Code block dir="ltr">
                  {JSON.stringify(c.getValue(), null, 2)}
                </Code>
              </Popover.Dropdown>
            </Popover>
          ) : (
            '—'
          ),
      }),
    ],
    [t, i18n.language],
  );
  return (
    <>
      <PageHeader title={t('audit.title')} />
      <ListBar total={list.total} exact={list.totalExact}>
        <SearchBox label={t('audit.search')} value={search.q} onSearch={(q) => setSearch({ ...search, q })} />
        <Select
          label={t('audit.entityType')}
          clearable
          searchable
          w={200}
          value={search.entity_type ?? null}
          onChange={(v) => setSearch({ ...search, entity_type: v ?? undefined })}
          data={AUDIT_ENTITY_TYPES}
        />
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setSearch({ ...search, actor_id: draft.actor_id.trim() || undefined, entity_id: draft.entity_id.trim() || undefined });
          }}
        >
          <Group gap="sm" align="flex-end">
            <TextInput
              label={t('audit.entityId')}
              w={220}
              value={draft.entity_id}
              onChange={(e) => setDraft({ ...draft, entity_id: e.currentTarget.value })}
            />
            <TextInput
              label={t('audit.actorId')}
              w={220}
              value={draft.actor_id}
              onChange={(e) => setDraft({ ...draft, actor_id: e.currentTarget.value })}
            />
            <Button type="submit" variant="default">
              {t('audit.apply')}
            </Button>
          </Group>
        </form>
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
        label={t('audit.title')}
        rows={list.rows}
        columns={columns}
        rowId={(e) => e.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={search.q ? t('list.noMatch') : t('audit.empty')}
        sortable={Object.keys(AUDIT_SORTS)}
        sort={sortState(search.sort ?? '-created', AUDIT_SORTS)}
        onSort={(s) => setSearch({ ...search, sort: sortParam(s, AUDIT_SORTS) })}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
    </>
  );
}

/** The entity an entry names, linked where the panel has its page. */
function EntityLink({ entry }: { entry: Entry }) {
  if (!entry.entity_type) return <>—</>;
  const label = `${entry.entity_type}${entry.entity_id ? ` ${entry.entity_id}` : ''}`;
  if (entry.entity_type === 'node' && entry.entity_id) {
    return (
      <AnchorLink to="/nodes/$id" params={{ id: entry.entity_id }} size="sm">
        {label}
      </AnchorLink>
    );
  }
  if (entry.entity_type === 'subscription' && entry.entity_id) {
    return (
      <AnchorLink to="/subscriptions/$id" params={{ id: entry.entity_id }} size="sm">
        {label}
      </AnchorLink>
    );
  }
  return <span className="svc-mono">{label}</span>;
}
