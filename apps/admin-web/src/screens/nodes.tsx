import { Badge, Button, Group, Select, Stack, Text, TextInput, Tooltip } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatBytes, formatNumber, formatRelative } from '@svc/web-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { AnchorLink } from '../components/anchor-link.tsx';
import { useCursorList } from '../components/cursor-list.ts';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { ListBar, SearchBox, sortParam, sortState } from '../components/list-search.tsx';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { useFallbackInterval } from '../events.ts';
import { NODE_SORTS } from '../list-sorts.ts';
import { useCan } from '../me.tsx';

export type Node = AdminSchemas['Node'];
export interface NodesSearch {
  connectivity?: 'online' | 'offline' | undefined;
  admin_status?: 'enabled' | 'disabled' | undefined;
  q?: string | undefined;
  sort?: string | undefined;
}

const col = createColumnHelper<Node>();

/** Every node with its live connectivity, revisions, last status and agent version. */
export function NodesScreen({ search, setSearch }: { search: NodesSearch; setSearch: (s: NodesSearch) => void }) {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const navigate = useNavigate();
  const poll = useFallbackInterval(15_000);
  const list = useCursorList(
    ['nodes', search],
    (cursor) =>
      unwrap(
        api.GET('/api/v1/nodes', {
          params: { query: { ...search, sort: search.sort as 'created' | undefined, ...(cursor ? { cursor } : {}), limit: 100 } },
        }),
      ),
    poll || undefined,
  );
  const [creating, create] = useDisclosure(false);
  const columns = useMemo(
    () => [
      col.accessor('name', {
        header: t('fields.name'),
        cell: (c) => (
          <AnchorLink to="/nodes/$id" params={{ id: c.row.original.id }} onClick={(e) => e.stopPropagation()}>
            {c.getValue()}
          </AnchorLink>
        ),
      }),
      col.accessor('address', { header: t('nodes.address') }),
      col.accessor('connectivity', {
        header: t('nodes.connectivity'),
        cell: (c) => (
          <Group gap={4} wrap="nowrap">
            <StatusBadge value={c.getValue()} />
            {c.row.original.admin_status === 'disabled' && <StatusBadge value="disabled" />}
            {c.row.original.traffic.limited_since && <StatusBadge value="limited" />}
          </Group>
        ),
      }),
      col.display({ id: 'revision', header: t('nodes.revision'), cell: (c) => <Revision node={c.row.original} /> }),
      col.display({
        id: 'status',
        header: t('nodes.lastStatus'),
        cell: (c) => <StatusLine node={c.row.original} lng={i18n.language} />,
      }),
      col.accessor('agent_version', {
        header: t('nodes.agent'),
        cell: (c) => (
          <Group gap={4} wrap="nowrap">
            <Text size="sm">{c.getValue() ?? '—'}</Text>
            {c.row.original.outdated_agent && <StatusBadge value="outdated" />}
            <AgentUpdateBadge node={c.row.original} />
          </Group>
        ),
      }),
    ],
    [t, i18n.language],
  );
  return (
    <>
      <PageHeader
        title={t('nodes.title')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-node">
              {t('nodes.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <ListBar total={list.total} exact={list.totalExact}>
        <SearchBox label={t('nodes.search')} value={search.q} onSearch={(q) => setSearch({ ...search, q })} />
        <Select
          aria-label={t('nodes.connectivity')}
          placeholder={t('nodes.connectivity')}
          clearable
          w={180}
          value={search.connectivity ?? null}
          onChange={(v) => setSearch({ ...search, connectivity: (v as NodesSearch['connectivity']) ?? undefined })}
          data={['online', 'offline'].map((v) => ({ value: v, label: t(`status.${v}`) }))}
        />
        <Select
          aria-label={t('nodes.adminStatus')}
          placeholder={t('nodes.adminStatus')}
          clearable
          w={180}
          value={search.admin_status ?? null}
          onChange={(v) => setSearch({ ...search, admin_status: (v as NodesSearch['admin_status']) ?? undefined })}
          data={['enabled', 'disabled'].map((v) => ({ value: v, label: t(`status.${v}`) }))}
        />
      </ListBar>
      <DataTable
        label={t('nodes.title')}
        rows={list.rows}
        columns={columns}
        rowId={(n) => n.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        onRowClick={(n) => navigate({ to: '/nodes/$id', params: { id: n.id } })}
        empty={search.q ? t('list.noMatch') : t('nodes.empty')}
        sortable={Object.keys(NODE_SORTS)}
        sort={sortState(search.sort, NODE_SORTS)}
        onSort={(s) => setSearch({ ...search, sort: sortParam(s, NODE_SORTS) })}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('nodes.create')}>
        <CreateNodeForm onCreated={(n) => navigate({ to: '/nodes/$id', params: { id: n.id } })} />
      </Dialog>
    </>
  );
}

const WRAPPING_BADGE = {
  root: { height: 'auto', minHeight: 'var(--badge-height)', lineHeight: 1.4, paddingBlock: 2 },
  label: { whiteSpace: 'normal', overflowWrap: 'anywhere' },
} as const;

/** "update available: X" when this control plane serves a newer svc-agent than the node runs (the node page upgrades it). */
export function AgentUpdateBadge({ node }: { node: Node }) {
  const { t } = useTranslation();
  if (!node.agent_upgrade_available) return null;
  return (
    // Its words wrap in a narrow cell (a phone) rather than cutting off the version.
    <Badge color="blue" variant="dot" maw="100%" styles={WRAPPING_BADGE} data-testid="agent-update-available">
      {t('nodes.updateAvailable', { version: node.agent_upgrade_available })}
    </Badge>
  );
}

export function Revision({ node }: { node: Node }) {
  const { t, i18n } = useTranslation();
  const behind = node.applied_revision < node.desired_revision;
  const label = t('nodes.revisionOf', {
    applied: formatNumber(i18n.language, node.applied_revision),
    desired: formatNumber(i18n.language, node.desired_revision),
  });
  if (node.apply_failed_revision != null) {
    return (
      <Tooltip label={node.last_apply_error ?? ''} multiline w={320}>
        <Badge color="red" variant="dot">
          {t('nodes.applyFailed', { revision: node.apply_failed_revision })}
        </Badge>
      </Tooltip>
    );
  }
  // Behind: the agent has not applied the latest revision yet (a dot says so; the words say how far).
  return behind ? (
    <Badge color="orange" variant="dot" data-testid="node-revision">
      {label}
    </Badge>
  ) : (
    <Text size="sm" data-testid="node-revision">
      {label}
    </Text>
  );
}

export function StatusLine({ node, lng }: { node: Node; lng: string }) {
  const { t } = useTranslation();
  const s = node.status as null | { cpu_percent?: number; memory_used_bytes?: number; memory_total_bytes?: number; connections?: number };
  if (!s || !node.last_status_at) return <Text size="sm">—</Text>;
  return (
    <Text size="sm">
      {t('nodes.statusLine', {
        cpu: Math.round(s.cpu_percent ?? 0),
        memory: formatBytes(lng, s.memory_used_bytes ?? 0),
        connections: s.connections ?? 0,
        when: formatRelative(lng, node.last_status_at),
      })}
    </Text>
  );
}

function CreateNodeForm({ onCreated }: { onCreated: (n: Node) => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<{ name: string; address: string }>({ defaultValues: { name: '', address: '' } });
  const { errors, isSubmitting } = form.formState;
  const create = useMutation({
    mutationFn: (body: { name: string; address: string }) => unwrap(api.POST('/api/v1/nodes', { body })),
    onSuccess: (n) => {
      void queryClient.invalidateQueries({ queryKey: ['nodes'] });
      onCreated(n);
    },
  });
  const submit = form.handleSubmit(async (values) => {
    try {
      await create.mutateAsync(values);
    } catch (err) {
      const message = showProblem(err, form.setError, ['name', 'address']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
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
        {errors.root && (
          <Text c="red" role="alert" size="sm">
            {errors.root.message}
          </Text>
        )}
        <Button type="submit" loading={isSubmitting}>
          {t('common.create')}
        </Button>
      </Stack>
    </form>
  );
}
