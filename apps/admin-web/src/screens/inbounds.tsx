import { Alert, Button, Group, NumberInput, Select, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { modals } from '@mantine/modals';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable } from '@svc/web-ui';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { AnchorLink } from '../components/anchor-link.tsx';
import { useCursorList } from '../components/cursor-list.ts';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { nameOf, useNodeOptions, useProfileOptions } from '../components/lookups.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { useCan } from '../me.tsx';

type Inbound = AdminSchemas['Inbound'];
const col = createColumnHelper<Inbound>();

export interface InboundsSearch {
  node_id?: string | undefined;
}

/** Inbounds: a profile bound to a node on a port. */
export function InboundsScreen({ search, setSearch }: { search: InboundsSearch; setSearch: (s: InboundsSearch) => void }) {
  const { t } = useTranslation();
  const can = useCan();
  const queryClient = useQueryClient();
  const nodes = useNodeOptions();
  const profiles = useProfileOptions();
  const list = useCursorList(['inbounds', search], (cursor) =>
    unwrap(api.GET('/api/v1/inbounds', { params: { query: { ...search, ...(cursor ? { cursor } : {}), limit: 100 } } })),
  );
  const [creating, create] = useDisclosure(false);
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/inbounds/{id}', { params: { path: { id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['inbounds'] }),
  });
  const columns = useMemo(
    () => [
      col.accessor('tag', { header: t('inbounds.tag') }),
      col.accessor('node_id', {
        header: t('inbounds.node'),
        cell: (c) => (
          <AnchorLink to="/nodes/$id" params={{ id: c.getValue() }}>
            {nameOf(nodes.data, c.getValue())}
          </AnchorLink>
        ),
      }),
      col.accessor('profile_id', { header: t('inbounds.profile'), cell: (c) => nameOf(profiles.data, c.getValue()) }),
      col.accessor('port', { header: t('inbounds.port') }),
      col.accessor('host', { header: t('inbounds.host'), cell: (c) => c.getValue() ?? '—' }),
      ...(can.write
        ? [
            col.display({
              id: 'actions',
              header: () => <span className="sr-only">{t('common.actions')}</span>,
              cell: (c) => (
                <Button
                  size="compact-xs"
                  color="red"
                  variant="subtle"
                  aria-label={t('inbounds.deleteNamed', { tag: c.row.original.tag })}
                  onClick={() =>
                    modals.openConfirmModal({
                      title: t('inbounds.deleteTitle', { tag: c.row.original.tag }),
                      children: <Text size="sm">{t('inbounds.deleteBody')}</Text>,
                      labels: { confirm: t('common.delete'), cancel: t('common.cancel') },
                      confirmProps: { color: 'red' },
                      onConfirm: () => remove.mutate(c.row.original.id),
                    })
                  }
                >
                  {t('common.delete')}
                </Button>
              ),
            }),
          ]
        : []),
    ],
    [t, nodes.data, profiles.data, can.write, remove],
  );
  return (
    <>
      <PageHeader
        title={t('inbounds.title')}
        subtitle={t('inbounds.subtitle')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-inbound">
              {t('inbounds.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      {remove.isError && (
        <Alert color="red" mb="sm">
          {remove.error.message}
        </Alert>
      )}
      <Group mb="sm">
        <Select
          aria-label={t('inbounds.node')}
          placeholder={t('inbounds.allNodes')}
          clearable
          searchable
          w={240}
          value={search.node_id ?? null}
          onChange={(v) => setSearch({ node_id: v ?? undefined })}
          data={nodes.data ?? []}
        />
      </Group>
      <DataTable
        label={t('inbounds.title')}
        rows={list.rows}
        columns={columns}
        rowId={(i) => i.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('inbounds.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('inbounds.create')}>
        <InboundForm nodeId={search.node_id} onSaved={create.close} />
      </Dialog>
    </>
  );
}

interface Values {
  node_id: string;
  profile_id: string;
  port: number | string;
  host: string;
  listen: string;
  chain_id: string;
}

function InboundForm({ nodeId, onSaved }: { nodeId: string | undefined; onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const nodes = useNodeOptions();
  const profiles = useProfileOptions();
  const form = useForm<Values>({ defaultValues: { node_id: nodeId ?? '', profile_id: '', port: 443, host: '', listen: '', chain_id: '' } });
  const chains = useQuery({
    queryKey: ['chains', 'options'],
    queryFn: () => unwrap(api.GET('/api/v1/chains', { params: { query: { limit: 200 } } })),
    select: (p) => p.items.map((c) => ({ value: c.id, label: c.name })),
  });
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async (v) => {
    try {
      await unwrap(
        api.POST('/api/v1/inbounds', {
          body: {
            node_id: v.node_id,
            profile_id: v.profile_id,
            port: Number(v.port),
            host: v.host.trim() || null,
            listen: v.listen.trim() || null,
            chain_id: null,
          },
        }),
      );
      await queryClient.invalidateQueries({ queryKey: ['inbounds'] });
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, ['node_id', 'profile_id', 'port', 'host', 'listen', 'chain_id']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <Controller
          control={form.control}
          name="node_id"
          rules={{ required: t('common.required') }}
          render={({ field }) => (
            <Select
              label={t('inbounds.node')}
              required
              searchable
              data={nodes.data ?? []}
              value={field.value || null}
              onChange={(v) => field.onChange(v ?? '')}
              error={errors.node_id?.message}
            />
          )}
        />
        <Controller
          control={form.control}
          name="profile_id"
          rules={{ required: t('common.required') }}
          render={({ field }) => (
            <Select
              label={t('inbounds.profile')}
              required
              searchable
              data={profiles.data ?? []}
              value={field.value || null}
              onChange={(v) => field.onChange(v ?? '')}
              error={errors.profile_id?.message}
            />
          )}
        />
        <SimpleGrid cols={{ base: 1, xs: 2 }}>
          <Controller
            control={form.control}
            name="port"
            render={({ field }) => (
              <NumberInput
                label={t('inbounds.port')}
                required
                min={1}
                max={65535}
                value={field.value}
                onChange={field.onChange}
                error={errors.port?.message}
              />
            )}
          />
          <TextInput
            label={t('inbounds.host')}
            description={t('inbounds.hostHint')}
            error={errors.host?.message}
            {...form.register('host')}
          />
        </SimpleGrid>
        <TextInput
          label={t('inbounds.listen')}
          description={t('inbounds.listenHint')}
          error={errors.listen?.message}
          {...form.register('listen')}
        />
        {(chains.data?.length ?? 0) > 0 && (
          <Controller
            control={form.control}
            name="chain_id"
            render={({ field }) => (
              <Select
                label={t('inbounds.chain')}
                description={t('inbounds.chainHint')}
                clearable
                data={chains.data ?? []}
                value={field.value || null}
                onChange={(v) => field.onChange(v ?? '')}
                error={errors.chain_id?.message}
              />
            )}
          />
        )}
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
