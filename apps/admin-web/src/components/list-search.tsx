import { Group, Text, TextInput } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import type { SortState } from '@svc/web-ui';
import { formatNumber } from '@svc/web-ui';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';

/**
 * The search box of a server-side list: what is typed goes to the URL's `q` after a pause
 * (the list route searches; the URL keeps it for reload, back and sharing), Enter sends it
 * at once.
 */
export function SearchBox({
  value,
  onSearch,
  label,
}: {
  value: string | undefined;
  onSearch: (q: string | undefined) => void;
  label: string;
}) {
  const [text, setText] = useState(value ?? '');
  // The URL changed from elsewhere (back, a link, a cleared filter): show what it says.
  useEffect(() => setText((now) => (now.trim() === (value ?? '') ? now : (value ?? ''))), [value]);
  const send = useDebouncedCallback((q: string) => onSearch(q.trim() || undefined), 300);
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        send.cancel();
        onSearch(text.trim() || undefined);
      }}
    >
      <TextInput
        type="search"
        aria-label={label}
        placeholder={label}
        value={text}
        maxLength={200}
        onChange={(e) => {
          setText(e.currentTarget.value);
          send(e.currentTarget.value);
        }}
        w={{ base: '100%', sm: 300 }}
        data-testid="list-search"
      />
    </form>
  );
}

/** "1,234 found" or "about 1,000,000": the first page's total, labelled when it is an estimate. */
export function TotalLabel({ total, exact }: { total: number | null | undefined; exact: boolean | null | undefined }) {
  const { t, i18n } = useTranslation();
  if (total == null) return null;
  const n = formatNumber(i18n.language, total);
  return (
    <Text size="sm" c="dimmed" aria-live="polite" data-testid="list-total">
      {exact ? t('list.total', { n }) : t('list.totalEstimate', { n })}
    </Text>
  );
}

/** The filter row of a list: its filters, then the total at the far end. */
export function ListBar({
  children,
  total,
  exact,
}: {
  children: React.ReactNode;
  total: number | null | undefined;
  exact: boolean | null | undefined;
}) {
  return (
    <Group mb="sm" gap="sm" align="flex-end" justify="space-between">
      <Group gap="sm" align="flex-end">
        {children}
      </Group>
      <TotalLabel total={total} exact={exact} />
    </Group>
  );
}

/**
 * A list's `sort` URL value (`expires`, `-expires`) and the table's sort state: `keys` maps
 * column ids to the route's sort keys.
 */
export function sortState(sort: string | undefined, keys: Record<string, string>): SortState | undefined {
  if (!sort) return undefined;
  const desc = sort.startsWith('-');
  const key = desc ? sort.slice(1) : sort;
  const by = Object.entries(keys).find(([, k]) => k === key)?.[0];
  return by ? { by, dir: desc ? 'desc' : 'asc' } : undefined;
}

export function sortParam(state: SortState, keys: Record<string, string>): string | undefined {
  const key = keys[state.by];
  if (!key) return undefined;
  return state.dir === 'desc' ? `-${key}` : key;
}
