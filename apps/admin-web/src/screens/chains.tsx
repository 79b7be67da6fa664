import { ActionIcon, Alert, Anchor, Button, Group, NumberInput, Select, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatDateTime } from '@svc/web-ui';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { Controller, useFieldArray, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { useCursorList } from '../components/cursor-list.ts';
import { DeleteButton } from '../components/delete-button.tsx';
import { Dialog } from '../components/dialog.tsx';
import { showProblem } from '../components/form-errors.ts';
import { nameOf, useNodeOptions } from '../components/lookups.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { useCan } from '../me.tsx';

type Chain = AdminSchemas['Chain'];
const col = createColumnHelper<Chain>();

/** Chains: traffic enters at the first hop and leaves through the last; inbounds route through one. */
export function ChainsScreen() {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const nodes = useNodeOptions();
  const list = useCursorList(['chains'], (cursor) =>
    unwrap(api.GET('/api/v1/chains', { params: { query: { ...(cursor ? { cursor } : {}), limit: 100 } } })),
  );
  const [creating, create] = useDisclosure(false);
  const [editing, setEditing] = useState<Chain | null>(null);
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
      col.accessor('hops', {
        header: t('chains.hops'),
        cell: (c) =>
          [...c.getValue()]
            .sort((a, b) => a.position - b.position)
            .map((h) => `${nameOf(nodes.data, h.node_id)}:${h.port}`)
            .join(' → '),
      }),
      col.accessor('updated_at', { header: t('fields.updated'), cell: (c) => formatDateTime(i18n.language, c.getValue()) }),
    ],
    [t, i18n.language, can.write, nodes.data],
  );
  return (
    <>
      <PageHeader
        title={t('chains.title')}
        subtitle={t('chains.subtitle')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-chain">
              {t('chains.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <DataTable
        label={t('chains.title')}
        rows={list.rows}
        columns={columns}
        rowId={(c) => c.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('chains.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('chains.create')} size="lg">
        <ChainForm onSaved={create.close} />
      </Dialog>
      <Dialog opened={editing !== null} onClose={() => setEditing(null)} title={editing?.name ?? ''} size="lg">
        {editing && <ChainForm chain={editing} onSaved={() => setEditing(null)} />}
      </Dialog>
    </>
  );
}

interface Values {
  name: string;
  hops: Array<{ node_id: string; port: number | string }>;
}

/** The hop editor: add, order and remove hops (the list is replaced as a whole on save). */
function ChainForm({ chain, onSaved }: { chain?: Chain; onSaved: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const nodes = useNodeOptions();
  const form = useForm<Values>({
    defaultValues: {
      name: chain?.name ?? '',
      hops: chain
        ? [...chain.hops].sort((a, b) => a.position - b.position).map((h) => ({ node_id: h.node_id, port: h.port }))
        : [
            { node_id: '', port: 10443 },
            { node_id: '', port: 10443 },
          ],
    },
  });
  const hops = useFieldArray({ control: form.control, name: 'hops' });
  const { errors, isSubmitting } = form.formState;
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/chains/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['chains'] });
      onSaved();
    },
  });
  const submit = form.handleSubmit(async (v) => {
    const body = { name: v.name, hops: v.hops.map((h) => ({ node_id: h.node_id, port: Number(h.port) })) };
    try {
      if (chain) await unwrap(api.PATCH('/api/v1/chains/{id}', { params: { path: { id: chain.id } }, body }));
      else await unwrap(api.POST('/api/v1/chains', { body }));
      await queryClient.invalidateQueries({ queryKey: ['chains'] });
      onSaved();
    } catch (err) {
      const message = showProblem(err, form.setError, ['name']);
      const hopErrors = Object.entries((err as { problem?: { errors?: Record<string, string> } }).problem?.errors ?? {}).filter(([k]) =>
        k.startsWith('hops'),
      );
      form.setError('root', { message: [message, ...hopErrors.map(([k, e]) => `${k}: ${e}`)].filter(Boolean).join('; ') });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label={t('fields.name')}
          placeholder="fra-to-ams"
          required
          error={errors.name?.message}
          {...form.register('name', { required: t('common.required') })}
        />
        <Text size="xs" c="dimmed">
          {t('chains.hopsHint')}
        </Text>
        {hops.fields.map((field, i) => (
          <Group key={field.id} gap="xs" wrap="nowrap" align="flex-end" data-testid="chain-hop">
            <Controller
              control={form.control}
              name={`hops.${i}.node_id` as const}
              render={({ field: f }) => (
                <Select
                  style={{ flex: 1 }}
                  label={t('chains.hopNode', { n: i + 1 })}
                  searchable
                  data={nodes.data ?? []}
                  value={f.value || null}
                  onChange={(v) => f.onChange(v ?? '')}
                />
              )}
            />
            <Controller
              control={form.control}
              name={`hops.${i}.port` as const}
              render={({ field: f }) => (
                <NumberInput w={110} label={t('inbounds.port')} min={1} max={65535} value={f.value} onChange={f.onChange} />
              )}
            />
            <ActionIcon
              variant="default"
              size="lg"
              aria-label={t('chains.moveUp', { n: i + 1 })}
              disabled={i === 0}
              onClick={() => hops.move(i, i - 1)}
            >
              ↑
            </ActionIcon>
            <ActionIcon
              variant="default"
              size="lg"
              aria-label={t('chains.removeHop', { n: i + 1 })}
              disabled={hops.fields.length <= 1}
              onClick={() => hops.remove(i)}
            >
              ×
            </ActionIcon>
          </Group>
        ))}
        <Group>
          <Button variant="default" size="xs" onClick={() => hops.append({ node_id: '', port: 10443 })}>
            {t('chains.addHop')}
          </Button>
        </Group>
        {errors.root?.message && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Group justify="space-between">
          {chain ? (
            <DeleteButton
              title={t('chains.deleteTitle', { name: chain.name })}
              body={t('chains.deleteBody')}
              onConfirm={() => remove.mutate(chain.id)}
            />
          ) : (
            <span />
          )}
          <Button type="submit" loading={isSubmitting}>
            {chain ? t('common.save') : t('common.create')}
          </Button>
        </Group>
        {remove.isError && <Alert color="red">{remove.error.message}</Alert>}
      </Stack>
    </form>
  );
}
