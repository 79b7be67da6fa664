import { Alert, Anchor, Badge, Button, Checkbox, Group, MultiSelect, Stack, Text, TextInput } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { modals } from '@mantine/modals';
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
import { notify } from '../components/notify.ts';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { SecretOnce } from '../components/secret-once.tsx';
import { useCan } from '../me.tsx';

type Webhook = AdminSchemas['Webhook'];
type Delivery = AdminSchemas['WebhookDelivery'];
type EventType = NonNullable<AdminSchemas['CreateWebhook']['event_types']>[number];
const EVENT_TYPES: EventType[] = [
  'client.registered',
  'node.agent_outdated',
  'node.apply_failed',
  'node.apply_recovered',
  'certificate.expiring',
  'certificate.issued',
  'certificate.issue_failed',
  'payment.awaiting_confirmation',
  'payment.succeeded',
  'payment.refunded',
];
const col = createColumnHelper<Webhook>();
const dcol = createColumnHelper<Delivery>();

/** Outbound webhooks (docs/notifications.md): endpoints, the events they take, their delivery log, a test send. */
export function WebhooksScreen() {
  const { t } = useTranslation();
  const can = useCan();
  const list = useCursorList(['webhooks'], (cursor) =>
    unwrap(api.GET('/api/v1/webhooks', { params: { query: { ...(cursor ? { cursor } : {}), limit: 100 } } })),
  );
  const [creating, create] = useDisclosure(false);
  const [editing, setEditing] = useState<Webhook | null>(null);
  const [log, setLog] = useState<Webhook | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const columns = useMemo(
    () => [
      col.accessor('url', {
        header: t('webhooks.url'),
        cell: (c) =>
          can.write ? (
            <Anchor component="button" type="button" onClick={() => setEditing(c.row.original)} className="svc-mono">
              {c.getValue()}
            </Anchor>
          ) : (
            <span className="svc-mono">{c.getValue()}</span>
          ),
      }),
      col.accessor('description', { header: t('webhooks.description') }),
      col.accessor('event_types', {
        header: t('webhooks.events'),
        cell: (c) => (c.getValue() === null ? t('webhooks.allEvents') : (c.getValue() as string[]).join(', ')),
      }),
      col.accessor('enabled', {
        header: t('fields.status'),
        cell: (c) => (
          <Badge variant="dot" color={c.getValue() ? 'teal' : 'gray'}>
            {t(c.getValue() ? 'status.enabled' : 'status.disabled')}
          </Badge>
        ),
      }),
      col.display({
        id: 'log',
        header: () => <span className="sr-only">{t('common.actions')}</span>,
        cell: (c) => (
          <Button size="compact-xs" variant="subtle" onClick={() => setLog(c.row.original)}>
            {t('webhooks.deliveries')}
          </Button>
        ),
      }),
    ],
    [t, can.write],
  );
  return (
    <>
      <PageHeader
        title={t('webhooks.title')}
        subtitle={t('webhooks.subtitle')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-webhook">
              {t('webhooks.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      {secret && (
        <SecretOnce
          secret={secret}
          title={t('webhooks.secretTitle')}
          body={t('webhooks.secretBody')}
          testId="webhook-secret"
          onClose={() => setSecret(null)}
        />
      )}
      <DataTable
        label={t('webhooks.title')}
        rows={list.rows}
        columns={columns}
        rowId={(w) => w.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('webhooks.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('webhooks.create')} size="lg">
        <WebhookForm
          onSaved={(s) => {
            create.close();
            if (s) setSecret(s);
          }}
        />
      </Dialog>
      <Dialog opened={editing !== null} onClose={() => setEditing(null)} title={t('webhooks.edit')} size="lg">
        {editing && (
          <WebhookForm
            webhook={editing}
            onSaved={(s) => {
              setEditing(null);
              if (s) setSecret(s);
            }}
          />
        )}
      </Dialog>
      <Dialog opened={log !== null} onClose={() => setLog(null)} title={log ? t('webhooks.deliveriesOf', { url: log.url }) : ''} size="xl">
        {log && <Deliveries webhook={log} />}
      </Dialog>
    </>
  );
}

interface Values {
  url: string;
  description: string;
  all: boolean;
  event_types: string[];
  enabled: boolean;
}

function WebhookForm({ webhook, onSaved }: { webhook?: Webhook; onSaved: (secret?: string) => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const form = useForm<Values>({
    defaultValues: {
      url: webhook?.url ?? '',
      description: webhook?.description ?? '',
      all: webhook ? webhook.event_types === null : true,
      event_types: webhook?.event_types ?? [],
      enabled: webhook?.enabled ?? true,
    },
  });
  const { errors, isSubmitting } = form.formState;
  const all = form.watch('all');
  const invalidate = () => queryClient.invalidateQueries({ queryKey: ['webhooks'] });
  const remove = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      void invalidate();
      onSaved();
    },
  });
  const rotate = useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/api/v1/webhooks/{id}/rotate-secret', { params: { path: { id } } })),
    onSuccess: (w) => {
      void invalidate();
      onSaved((w as { secret?: string }).secret);
    },
  });
  const submit = form.handleSubmit(async (v) => {
    const body = {
      url: v.url.trim(),
      description: v.description,
      enabled: v.enabled,
      event_types: v.all ? null : (v.event_types as EventType[]),
    };
    try {
      if (webhook) {
        await unwrap(api.PATCH('/api/v1/webhooks/{id}', { params: { path: { id: webhook.id } }, body }));
        await invalidate();
        onSaved();
      } else {
        const created = await unwrap(api.POST('/api/v1/webhooks', { body }));
        await invalidate();
        onSaved((created as { secret?: string }).secret);
      }
    } catch (err) {
      const message = showProblem(err, form.setError, ['url', 'description', 'event_types', 'enabled']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          type="url"
          label={t('webhooks.url')}
          description={t('webhooks.urlHint')}
          required
          error={errors.url?.message}
          {...form.register('url', { required: t('common.required') })}
        />
        <TextInput label={t('webhooks.description')} error={errors.description?.message} {...form.register('description')} />
        <Controller
          control={form.control}
          name="all"
          render={({ field }) => (
            <Checkbox label={t('webhooks.allEvents')} checked={field.value} onChange={(e) => field.onChange(e.currentTarget.checked)} />
          )}
        />
        {!all && (
          <Controller
            control={form.control}
            name="event_types"
            render={({ field }) => (
              <MultiSelect
                label={t('webhooks.events')}
                data={EVENT_TYPES}
                value={field.value}
                onChange={field.onChange}
                searchable
                error={errors.event_types?.message}
              />
            )}
          />
        )}
        <Controller
          control={form.control}
          name="enabled"
          render={({ field }) => (
            <Checkbox label={t('status.enabled')} checked={field.value} onChange={(e) => field.onChange(e.currentTarget.checked)} />
          )}
        />
        {errors.root && (
          <Alert color="red" role="alert">
            {errors.root.message}
          </Alert>
        )}
        <Group justify="space-between">
          {webhook ? (
            <Group gap="xs">
              <DeleteButton title={t('webhooks.deleteTitle')} body={t('webhooks.deleteBody')} onConfirm={() => remove.mutate(webhook.id)} />
              <Button
                variant="default"
                onClick={() =>
                  modals.openConfirmModal({
                    title: t('webhooks.rotateTitle'),
                    children: <Text size="sm">{t('webhooks.rotateBody')}</Text>,
                    labels: { confirm: t('webhooks.rotate'), cancel: t('common.cancel') },
                    onConfirm: () => rotate.mutate(webhook.id),
                  })
                }
              >
                {t('webhooks.rotate')}
              </Button>
            </Group>
          ) : (
            <span />
          )}
          <Button type="submit" loading={isSubmitting}>
            {webhook ? t('common.save') : t('common.create')}
          </Button>
        </Group>
        {(remove.isError || rotate.isError) && <Alert color="red">{(remove.error ?? rotate.error)?.message}</Alert>}
      </Stack>
    </form>
  );
}

/** The delivery log of one endpoint, newest first, with a test send. */
function Deliveries({ webhook }: { webhook: Webhook }) {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const queryClient = useQueryClient();
  const list = useCursorList(['webhooks', 'deliveries', webhook.id], (cursor) =>
    unwrap(
      api.GET('/api/v1/webhooks/{id}/deliveries', {
        params: { path: { id: webhook.id }, query: { ...(cursor ? { cursor } : {}), limit: 100 } },
      }),
    ),
  );
  const test = useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/webhooks/{id}/test', { params: { path: { id: webhook.id } } })),
    onSuccess: () => {
      notify(t('webhooks.testQueued'));
      void queryClient.invalidateQueries({ queryKey: ['webhooks', 'deliveries', webhook.id] });
    },
    onError: (e) => notify(e.message, 'red'),
  });
  const columns = useMemo(
    () => [
      dcol.accessor('created_at', { header: t('fields.created'), cell: (c) => formatDateTime(i18n.language, c.getValue()) }),
      dcol.accessor('event_type', { header: t('webhooks.event'), cell: (c) => <span className="svc-mono">{c.getValue()}</span> }),
      dcol.accessor('status', {
        header: t('fields.status'),
        cell: (c) => (
          <Badge variant="dot" color={{ pending: 'yellow', succeeded: 'teal', failed: 'red' }[c.getValue()]}>
            {t(`webhooks.statuses.${c.getValue()}`)}
          </Badge>
        ),
      }),
      dcol.accessor('attempts', { header: t('webhooks.attempts') }),
      dcol.accessor('last_response_status', { header: t('webhooks.response'), cell: (c) => c.getValue() ?? '—' }),
      dcol.accessor('last_error', { header: t('webhooks.error'), cell: (c) => c.getValue() ?? '—' }),
    ],
    [t, i18n.language],
  );
  return (
    <Stack>
      {can.write && (
        <Group justify="flex-end">
          <Button variant="default" onClick={() => test.mutate()} loading={test.isPending}>
            {t('webhooks.test')}
          </Button>
        </Group>
      )}
      <DataTable
        label={t('webhooks.deliveries')}
        rows={list.rows}
        columns={columns}
        rowId={(d) => d.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('webhooks.noDeliveries')}
        height={420}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
    </Stack>
  );
}
