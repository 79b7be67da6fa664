import { Alert, Anchor, Button, Group, MultiSelect, Stack, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatDateTime } from '@svc/web-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { useCursorList } from '../components/cursor-list.ts';
import { DeleteButton } from '../components/delete-button.tsx';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { nameOf, useInboundOptions, useNodeOptions } from '../components/lookups.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { useCan } from '../me.tsx';

type AccessGroup = AdminSchemas['AccessGroup'];
const col = createColumnHelper<AccessGroup>();

/** Access groups: the inbounds a subscription reaches. */
export function GroupsScreen() {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const list = useCursorList(['access-groups'], (cursor) =>
    unwrap(api.GET('/api/v1/access-groups', { params: { query: { ...(cursor ? { cursor } : {}), limit: 100 } } })),
  );
  const [creating, create] = useDisclosure(false);
  const [editing, setEditing] = useState<AccessGroup | null>(null);
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
      col.accessor('inbound_ids', { header: t('groups.inbounds'), cell: (c) => c.getValue().length }),
      col.accessor('updated_at', { header: t('fields.updated'), cell: (c) => formatDateTime(i18n.language, c.getValue()) }),
    ],
    [t, i18n.language, can.write],
  );
  return (
    <>
      <PageHeader
        title={t('groups.title')}
        subtitle={t('groups.subtitle')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-group">
              {t('groups.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <DataTable
        label={t('groups.title')}
        rows={list.rows}
        columns={columns}
        rowId={(g) => g.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('groups.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('groups.create')}>
        <GroupForm onSaved={create.close} />
      </Dialog>
      <Dialog opened={editing !== null} onClose={() => setEditing(null)} title={t('groups.edit')}>
        {editing && <GroupForm group={editing} onSaved={() => setEditing(null)} />}
      </Dialog>
    </>
  );
}

function GroupForm({ group, onSaved }: { group?: AccessGroup; onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const inbounds = useInboundOptions();
  const nodes = useNodeOptions();
  const form = useForm<{ name: string; inbound_ids: string[] }>({
    defaultValues: { name: group?.name ?? '', inbound_ids: group?.inbound_ids ?? [] },
  });
  const { errors, isSubmitting } = form.formState;
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/access-groups/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['access-groups'] });
      onSaved();
    },
  });
  const submit = form.handleSubmit(async (body) => {
    try {
      if (group) await unwrap(api.PATCH('/api/v1/access-groups/{id}', { params: { path: { id: group.id } }, body }));
      else await unwrap(api.POST('/api/v1/access-groups', { body }));
      await queryClient.invalidateQueries({ queryKey: ['access-groups'] });
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, ['name', 'inbound_ids']);
      if (message) form.setError('root', { message });
    }
  });
  const options = (inbounds.data ?? []).map((i) => ({ value: i.id, label: `${i.tag} @ ${nameOf(nodes.data, i.node_id)}` }));
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label={t('fields.name')}
          required
          error={errors.name?.message}
          {...form.register('name', { required: t('common.required') })}
        />
        <Controller
          control={form.control}
          name="inbound_ids"
          render={({ field }) => (
            <MultiSelect
              label={t('groups.inbounds')}
              description={t('groups.inboundsHint')}
              data={options}
              value={field.value}
              onChange={field.onChange}
              searchable
              error={errors.inbound_ids?.message}
            />
          )}
        />
        {errors.root && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Group justify="space-between">
          {group ? (
            <DeleteButton
              title={t('groups.deleteTitle', { name: group.name })}
              body={t('groups.deleteBody')}
              onConfirm={() => remove.mutate(group.id)}
            />
          ) : (
            <span />
          )}
          <Button type="submit" loading={isSubmitting}>
            {group ? t('common.save') : t('common.create')}
          </Button>
        </Group>
        {remove.isError && <Alert color="red">{remove.error.message}</Alert>}
      </Stack>
    </form>
  );
}
