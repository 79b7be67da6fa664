import '@mantine/spotlight/styles.css';
import { Badge, Loader, Text } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { createSpotlight, Spotlight } from '@mantine/spotlight';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, unwrap } from '../api.ts';

const [store, palette] = createSpotlight();

/** How many of each kind the palette shows: a jump list, not a list screen. */
const EACH = 5;

export interface Section {
  to: string;
  label: string;
}

/**
 * The Ctrl+K palette (issue 30 item 7): jump to a node, client or subscription by name, email,
 * note or id (the list routes' own `q`, so the palette finds what the list screens find), or to
 * a section of the panel by its name. Loaded on first use: it is not in the first load.
 */
export function Palette({ opened, onClose, sections }: { opened: boolean; onClose: () => void; sections: Section[] }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [query, setQuery] = useState('');
  const [q] = useDebouncedValue(query.trim(), 200);
  useEffect(() => {
    if (opened) palette.open();
    else palette.close();
  }, [opened]);

  const found = useQuery({
    queryKey: ['palette', q],
    enabled: q.length > 0,
    staleTime: 10_000,
    queryFn: async () => {
      const query = { q, limit: EACH };
      const [nodes, clients, subscriptions] = await Promise.all([
        unwrap(api.GET('/api/v1/nodes', { params: { query } })),
        unwrap(api.GET('/api/v1/clients', { params: { query } })),
        unwrap(api.GET('/api/v1/subscriptions', { params: { query } })),
      ]);
      return { nodes: nodes.items, clients: clients.items, subscriptions: subscriptions.items };
    },
  });
  const emails = useMemo(() => new Map((found.data?.clients ?? []).map((c) => [c.id, c.email])), [found.data]);
  const needle = query.trim().toLowerCase();
  const screens = needle ? sections.filter((s) => s.label.toLowerCase().includes(needle)).slice(0, EACH) : [];
  const go = (to: string, search?: Record<string, string>) => {
    onClose();
    void navigate({ to, ...(search ? { search } : {}) });
  };
  const data = q.length > 0 && q === query.trim() ? found.data : undefined;
  const nothing =
    needle.length > 0 && screens.length === 0 && data && !data.nodes.length && !data.clients.length && !data.subscriptions.length;

  return (
    <Spotlight.Root
      store={store}
      query={query}
      onQueryChange={setQuery}
      shortcut={null}
      onSpotlightClose={onClose}
      scrollable
      maxHeight={420}
      // The dialog's accessible name, for screen readers: the search box says the rest.
      title={t('palette.title')}
      classNames={{ title: 'sr-only', header: 'svc-palette-header' }}
    >
      <Spotlight.Search
        placeholder={t('palette.placeholder')}
        aria-label={t('palette.placeholder')}
        rightSection={found.isFetching ? <Loader size="xs" aria-label={t('frame.loading')} /> : null}
      />
      <Spotlight.ActionsList aria-label={t('palette.results')}>
        {needle.length === 0 && <Spotlight.Empty>{t('palette.hint')}</Spotlight.Empty>}
        {screens.length > 0 && (
          <Spotlight.ActionsGroup label={t('palette.sections')}>
            {screens.map((s) => (
              <Spotlight.Action key={s.to} label={s.label} onClick={() => go(s.to)} />
            ))}
          </Spotlight.ActionsGroup>
        )}
        {data && data.nodes.length > 0 && (
          <Spotlight.ActionsGroup label={t('nav.nodes')}>
            {data.nodes.map((n) => (
              <Spotlight.Action
                key={n.id}
                label={n.name}
                description={n.address}
                rightSection={<Badge color={n.connectivity === 'online' ? 'teal' : 'gray'}>{t(`status.${n.connectivity}`)}</Badge>}
                onClick={() => go(`/nodes/${n.id}`)}
              />
            ))}
          </Spotlight.ActionsGroup>
        )}
        {data && data.clients.length > 0 && (
          <Spotlight.ActionsGroup label={t('nav.clients')}>
            {data.clients.map((c) => (
              <Spotlight.Action
                key={c.id}
                label={c.email}
                description={c.note ?? undefined}
                rightSection={<Text size="xs">{t('clients.subscriptions')}</Text>}
                onClick={() => go('/subscriptions', { client_id: c.id })}
              />
            ))}
          </Spotlight.ActionsGroup>
        )}
        {data && data.subscriptions.length > 0 && (
          <Spotlight.ActionsGroup label={t('nav.subscriptions')}>
            {data.subscriptions.map((s) => (
              <Spotlight.Action
                key={s.id}
                label={s.note || s.id}
                description={emails.get(s.client_id) ?? s.id}
                rightSection={<Badge variant="light">{t(`status.${s.status}`)}</Badge>}
                onClick={() => go(`/subscriptions/${s.id}`)}
              />
            ))}
          </Spotlight.ActionsGroup>
        )}
        {nothing && <Spotlight.Empty>{t('palette.nothing')}</Spotlight.Empty>}
      </Spotlight.ActionsList>
    </Spotlight.Root>
  );
}
