import { Anchor, Badge, Button, Group, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { AdminSchemas } from '@svc/api-client';
import { DataTable, formatDateTime } from '@svc/web-ui';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';
import { useCursorList } from '../components/cursor-list.ts';
import { Dialog } from '../components/dialog.tsx';
import { PageHeader } from '../components/page-header.tsx';
import { ReadOnlyNote } from '../components/read-only-note.tsx';
import { useCan } from '../me.tsx';
import { ProfileForm } from './profile-form.tsx';

type Profile = AdminSchemas['InboundProfile'];
const col = createColumnHelper<Profile>();

/** Inbound profiles: protocol, transport and security, bound to nodes by inbounds. */
export function ProfilesScreen() {
  const { t, i18n } = useTranslation();
  const can = useCan();
  const list = useCursorList(['inbound-profiles'], (cursor) =>
    unwrap(api.GET('/api/v1/inbound-profiles', { params: { query: { ...(cursor ? { cursor } : {}), limit: 100 } } })),
  );
  const [creating, create] = useDisclosure(false);
  const [editing, setEditing] = useState<Profile | null>(null);
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
      col.accessor('protocol', { header: t('profiles.protocol'), cell: (c) => <Badge variant="light">{c.getValue()}</Badge> }),
      col.display({
        id: 'stream',
        header: t('profiles.transport'),
        cell: (c) => (
          <Text size="sm">
            {c.row.original.stream.network} · {c.row.original.stream.security}
          </Text>
        ),
      }),
      col.accessor('created_at', { header: t('fields.created'), cell: (c) => formatDateTime(i18n.language, c.getValue()) }),
    ],
    [t, i18n.language, can.write],
  );
  return (
    <>
      <PageHeader
        title={t('profiles.title')}
        subtitle={t('profiles.subtitle')}
        actions={
          can.write && (
            <Button onClick={create.open} data-testid="create-profile">
              {t('profiles.create')}
            </Button>
          )
        }
      />
      <ReadOnlyNote />
      <DataTable
        label={t('profiles.title')}
        rows={list.rows}
        columns={columns}
        rowId={(p) => p.id}
        loading={list.loading}
        hasMore={list.hasMore}
        loadMore={list.loadMore}
        empty={t('profiles.empty')}
        sortLabels={{ asc: t('common.sortAsc'), desc: t('common.sortDesc'), none: t('common.sortNone') }}
      />
      <Dialog opened={creating} onClose={create.close} title={t('profiles.create')} size="lg">
        <ProfileForm onSaved={create.close} />
      </Dialog>
      <Dialog opened={editing !== null} onClose={() => setEditing(null)} title={t('profiles.edit')} size="lg">
        {editing && <ProfileForm profile={editing} onSaved={() => setEditing(null)} />}
      </Dialog>
      <Group mt="xs">
        <Text size="xs" c="dimmed">
          {t('profiles.foot')}
        </Text>
      </Group>
    </>
  );
}
