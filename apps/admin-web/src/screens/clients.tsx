import { Alert, Anchor, Button, Group, Menu, PasswordInput, Select, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatDateTime } from '@svc/web-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { AnchorLink } from '../components/anchor-link.tsx';
import { type BulkActionDef, type BulkTarget, ListBulkActions, selectColumn, useRowSelection } from '../components/bulk-actions.tsx';
import { useCursorList } from '../components/cursor-list.ts';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { ListBar, SearchBox, sortParam, sortState } from '../components/list-search.tsx';
import { notify } from '../components/notify.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { StatusBadge } from '../components/status-badge.tsx';
import { CLIENT_SORTS } from '../list-sorts.ts';
import { useCan } from '../me.tsx';

type Client = AdminSchemas['Client'];
type ClientBulk = AdminSchemas['ClientBulk'];
const col = createColumnHelper<Client>();

export interface ClientsSearch {
  status?: Client['status'] | undefined;
  q?: string | undefined;
  sort?: string | undefined;
}

/** Clients (customers); status pending is the application queue (approve, reject). */
export function ClientsScreen({ search, setSearch }: { search: ClientsSearch; setSearch: (s: ClientsSearch) => void }) {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const list = useCursorList(['clients', search], (cursor) =>
    unwrap(
      api.GET('/api/v1/clients', {
        params: { query: { ...search, sort: search.sort as 'created' | undefined, ...(cursor ? { cursor } : {}), limit: 100 } },
      }),
    ),
  );
  // What a bulk action takes by filter: the list's filter and search, not its order.
  const scope = { status: search.status, q: search.q };
  const sel = useRowSelection(list.rows, (c: Client) => c.id, scope);
  const bulk = useClientBulk();
  const [creating, create] = useDisclosure(false);
  const [editing, setEditing] = useState<Client | null>(null);
  const decide = useMutation({
    mutationFn: ({ id, verdict }: { id: string; verdict: 'approve' | 'reject' }) =>
      verdict === 'approve'
        ? unwrap(api.POST('/api/v1/clients/{id}/approve', { params: { path: { id } } }))
        : unwrap(api.POST('/api/v1/clients/{id}/reject', { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['clients'] }),
    onError: (e) => notify(e.message, 'red'),
  });
  const columns = useMemo(
    () => [
      ...(can.write ? [selectColumn(sel, (c: Client) => c.email, t)] : []),
      col.accessor('email', {
        header: t('fields.email'),
        cell: (c) => (
          <Anchor component="button" type="button" onClick={() => setEditing(c.row.original)}>
            {c.getValue()}
          </Anchor>
        ),
      }),
      col.accessor('status', { header: t('fields.status'), cell: (c) => <StatusBadge value={c.getValue()} /> }),
      col.accessor('note', { header: t('fields.note'), cell: (c) => c.getValue() ?? '' }),
      col.accessor('created_at', { header: t('fields.created'), cell: (c) => formatDateTime(i18n.language, c.getValue()) }),
      col.display({
        id: 'actions',
        header: () => <span className="sr-only">{t('common.actions')}</span>,
        cell: (c) => {
          const client = c.row.original;
          return (
            <Group gap={4} wrap="nowrap">
              <AnchorLink to="/subscriptions" search={{ client_id: client.id }} size="sm">
                {t('clients.subscriptions')}
              </AnchorLink>
              {can.write && client.status === 'pending' && (
                <>
                  <Button size="compact-xs" onClick={() => decide.mutate({ id: client.id, verdict: 'approve' })}>
                    {t('clients.approve')}
                  </Button>
                  <Button size="compact-xs" color="red" variant="light" onClick={() => decide.mutate({ id: client.id, verdict: 'reject' })}>
                    {t('clients.reject')}
                  </Button>
                </>
              )}
              {can.write && client.status === 'active' && (
                <Menu>
                  <Menu.Target>
                    <Button size="compact-xs" variant="subtle" aria-label={t('clients.moreFor', { email: client.email })}>
                      …
                    </Button>
                  </Menu.Target>
                  <Menu.Dropdown>
                    <Menu.Item onClick={() => navigate({ to: '/subscriptions', search: { client_id: client.id, create: true } })}>
                      {t('clients.newSubscription')}
                    </Menu.Item>
                  </Menu.Dropdown>
                </Menu>
              )}
            </Group>
          );
        },
      }),
    ],
    [t, i18n.language, can.write, decide, navigate, sel],
  );
  return (
    <>
      <PageHeader
        title={t('clients.title')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-client">
              {t('clients.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <ListBar total={list.total} exact={list.totalExact}>
        <Select
          aria-label={t('fields.status')}
          placeholder={t('fields.status')}
          clearable
          w={200}
          value={search.status ?? null}
          onChange={(v) => setSearch({ ...search, status: (v as Client['status']) ?? undefined })}
          data={[
            { value: 'pending', label: t('clients.queue') },
            ...['active', 'rejected', 'disabled'].map((v) => ({ value: v, label: t(`status.${v}`) })),
          ]}
        />
        <SearchBox label={t('clients.search')} value={search.q} onSearch={(q) => setSearch({ ...search, q })} />
      </ListBar>
      {can.write && <ListBulkActions sel={sel} list={list} scope={scope} bulk={bulk} />}
      <DataTable
        label={t('clients.title')}
        rows={list.rows}
        columns={columns}
        rowId={(c) => c.id}
        selected={can.write ? sel.isSelected : undefined}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={search.status === 'pending' ? t('clients.queueEmpty') : search.q ? t('list.noMatch') : t('clients.empty')}
        sortable={Object.keys(CLIENT_SORTS)}
        sort={sortState(search.sort, CLIENT_SORTS)}
        onSort={(s) => setSearch({ ...search, sort: sortParam(s, CLIENT_SORTS) })}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('clients.create')}>
        <ClientForm
          onSaved={(c) => {
            create.close();
            if (c) void navigate({ to: '/subscriptions', search: { client_id: c.id, create: true } });
          }}
        />
      </Dialog>
      <Dialog opened={editing !== null} onClose={() => setEditing(null)} title={editing?.email ?? ''}>
        {editing && <ClientForm client={editing} readOnly={!can.write} onSaved={() => setEditing(null)} />}
      </Dialog>
    </>
  );
}

/** The clients list's bulk actions (POST /api/v1/clients/bulk): the state machine's moves, and delete. */
function useClientBulk(): { actions: BulkActionDef[]; target: BulkTarget<Client> } {
  const { t } = useTranslation();
  const move = (type: 'approve' | 'reject' | 'disable' | 'enable', label: string): BulkActionDef => ({
    type,
    label,
    initial: { type },
    describe: () => t(`bulk.client.${type}Describe`),
  });
  return {
    actions: [
      move('approve', t('clients.approve')),
      move('reject', t('clients.reject')),
      move('disable', t('common.disable')),
      move('enable', t('common.enable')),
      {
        type: 'delete',
        label: t('common.delete'),
        danger: t('bulk.client.deleteUnderstood'),
        initial: { type: 'delete' },
        describe: () => t('bulk.client.deleteDescribe'),
      },
    ],
    target: {
      list: 'clients',
      willChange: (count) => t('bulk.client.willChange', { count }),
      skippedHint: t('bulk.client.skippedHint'),
      post: (body) => unwrap(api.POST('/api/v1/clients/bulk', { body: body as ClientBulk })),
      sampleId: (c) => c.id,
      sampleLabel: (c) => (
        <Group gap="xs" wrap="wrap" component="span">
          <Text span size="sm">
            {c.email}
          </Text>
          <StatusBadge value={c.status} />
        </Group>
      ),
    },
  };
}

interface Values {
  email: string;
  note: string;
  password: string;
  status: string;
}

function ClientForm({ client, readOnly, onSaved }: { client?: Client; readOnly?: boolean; onSaved: (c?: Client) => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<Values>({
    defaultValues: { email: client?.email ?? '', note: client?.note ?? '', password: '', status: client?.status ?? 'active' },
  });
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async (v) => {
    try {
      let saved: Client;
      if (client) {
        saved = await unwrap(
          api.PATCH('/api/v1/clients/{id}', {
            params: { path: { id: client.id } },
            body: {
              email: v.email,
              note: v.note.trim() || null,
              ...(v.password ? { password: v.password } : {}),
              ...(v.status === 'active' || v.status === 'disabled' ? { status: v.status } : {}),
            },
          }),
        );
      } else {
        saved = await unwrap(
          api.POST('/api/v1/clients', {
            body: { email: v.email, note: v.note.trim() || null, ...(v.password ? { password: v.password } : {}) },
          }),
        );
      }
      await queryClient.invalidateQueries({ queryKey: ['clients'] });
      onSaved(client ? undefined : saved);
    } catch (err) {
      const message = showProblem(err, form.setError, ['email', 'note', 'password', 'status']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          type="email"
          label={t('fields.email')}
          required
          readOnly={readOnly}
          error={errors.email?.message}
          {...form.register('email', { required: t('common.required') })}
        />
        <Textarea
          label={t('fields.note')}
          autosize
          minRows={2}
          readOnly={readOnly}
          error={errors.note?.message}
          {...form.register('note')}
        />
        {!readOnly && (
          <PasswordInput
            label={t('clients.password')}
            description={client ? t('clients.passwordKeep') : t('clients.passwordHint')}
            autoComplete="new-password"
            error={errors.password?.message}
            {...form.register('password')}
          />
        )}
        {client && (client.status === 'active' || client.status === 'disabled') && !readOnly && (
          <Select
            label={t('fields.status')}
            data={['active', 'disabled'].map((v) => ({ value: v, label: t(`status.${v}`) }))}
            value={form.watch('status')}
            onChange={(v) => form.setValue('status', v ?? 'active')}
            allowDeselect={false}
          />
        )}
        {errors.root && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        {!readOnly && (
          <Button type="submit" loading={isSubmitting}>
            {client ? t('common.save') : t('common.create')}
          </Button>
        )}
      </Stack>
    </form>
  );
}
