import { Box, Center, Group, Loader, Table, Text, UnstyledButton } from '@mantine/core';
import { type ColumnDef, flexRender, getCoreRowModel, useReactTable } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type ReactNode, useEffect, useRef } from 'react';

export interface SortState {
  /** A column id the server sorts by. */
  by: string;
  dir: 'asc' | 'desc';
}

export interface DataTableProps<T> {
  /** The rows loaded so far (every page fetched, in order). */
  rows: T[];
  columns: ColumnDef<T, any>[];
  rowId: (row: T) => string;
  /** Accessible name of the table. */
  label: string;
  loading: boolean;
  /** More pages exist: fetched when the last rows scroll into view. */
  hasMore: boolean;
  loadMore: () => void;
  /** Columns (by id) the server can sort on; a header click asks for that order. */
  sortable?: readonly string[];
  sort?: SortState | undefined;
  onSort?: (sort: SortState) => void;
  onRowClick?: (row: T) => void;
  /** Rows picked for a bulk action: marked `data-selected` for the app's style (their checkbox column says so to readers). */
  selected?: (row: T) => boolean;
  empty: ReactNode;
  /** Height of the scrolling body; default: what is left of the window. */
  height?: number | string;
  sortLabels: { asc: string; desc: string; none: string };
}

const ROW_HEIGHT = 44;

/**
 * A server-side list: the rows come page by page from the API (cursor pages), the table shows
 * only the rows in view (TanStack Virtual: a 100,000-row list costs what 30 rows cost), the
 * next page loads when its end scrolls into view, and sorting is the server's (`onSort`).
 */
export function DataTable<T>(props: DataTableProps<T>) {
  const { rows, columns, loading, hasMore, loadMore } = props;
  const table = useReactTable({ data: rows, columns, getCoreRowModel: getCoreRowModel(), getRowId: props.rowId, manualSorting: true });
  const scroller = useRef<HTMLDivElement>(null);
  const model = table.getRowModel().rows;
  const virtual = useVirtualizer({
    count: model.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const items = virtual.getVirtualItems();
  const last = items.at(-1);
  useEffect(() => {
    if (hasMore && !loading && last && last.index >= model.length - 8) loadMore();
  }, [hasMore, loading, last, model.length, loadMore]);
  const padTop = items[0]?.start ?? 0;
  const padBottom = last ? virtual.getTotalSize() - last.end : 0;
  const colCount = table.getVisibleLeafColumns().length;

  return (
    <Box
      ref={scroller}
      style={{ height: props.height ?? 'calc(100dvh - 230px)', minHeight: 240, overflow: 'auto' }}
      tabIndex={0}
      role="region"
      aria-label={props.label}
    >
      <Table
        stickyHeader
        highlightOnHover={!!props.onRowClick}
        verticalSpacing="xs"
        miw={640}
        aria-label={props.label}
        aria-rowcount={rows.length}
      >
        <Table.Thead>
          {table.getHeaderGroups().map((group) => (
            <Table.Tr key={group.id}>
              {group.headers.map((header) => {
                const id = header.column.id;
                const canSort = props.sortable?.includes(id) && props.onSort;
                const active = props.sort?.by === id ? props.sort.dir : undefined;
                const content = header.isPlaceholder ? null : flexRender(header.column.columnDef.header, header.getContext());
                return (
                  <Table.Th
                    key={header.id}
                    aria-sort={active === 'asc' ? 'ascending' : active === 'desc' ? 'descending' : canSort ? 'none' : undefined}
                    style={{ whiteSpace: 'nowrap' }}
                  >
                    {canSort ? (
                      <UnstyledButton
                        onClick={() => props.onSort?.({ by: id, dir: active === 'asc' ? 'desc' : 'asc' })}
                        aria-label={`${typeof content === 'string' ? content : id}: ${active ? props.sortLabels[active] : props.sortLabels.none}`}
                        fw={600}
                        fz="sm"
                      >
                        <Group gap={4} wrap="nowrap">
                          {content}
                          <span aria-hidden="true">{active === 'asc' ? '▲' : active === 'desc' ? '▼' : '↕'}</span>
                        </Group>
                      </UnstyledButton>
                    ) : (
                      content
                    )}
                  </Table.Th>
                );
              })}
            </Table.Tr>
          ))}
        </Table.Thead>
        <Table.Tbody>
          {padTop > 0 && (
            // biome-ignore lint/a11y/noAriaHiddenOnFocusable: a spacer row has no focusable content; it only keeps the scroll height
            <tr aria-hidden="true">
              <td colSpan={colCount} style={{ height: padTop, padding: 0, border: 0 }} />
            </tr>
          )}
          {items.map((item) => {
            const row = model[item.index];
            if (!row) return null;
            const picked = props.selected?.(row.original) ?? false;
            return (
              <Table.Tr
                key={row.id}
                data-index={item.index}
                data-selected={picked || undefined}
                aria-rowindex={item.index + 2}
                style={{ height: ROW_HEIGHT, cursor: props.onRowClick ? 'pointer' : undefined }}
                onClick={props.onRowClick ? () => props.onRowClick?.(row.original) : undefined}
              >
                {row.getVisibleCells().map((cell) => (
                  <Table.Td key={cell.id} style={{ whiteSpace: 'nowrap', maxWidth: 320, overflow: 'hidden', textOverflow: 'ellipsis' }}>
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </Table.Td>
                ))}
              </Table.Tr>
            );
          })}
          {padBottom > 0 && (
            // biome-ignore lint/a11y/noAriaHiddenOnFocusable: a spacer row has no focusable content; it only keeps the scroll height
            <tr aria-hidden="true">
              <td colSpan={colCount} style={{ height: padBottom, padding: 0, border: 0 }} />
            </tr>
          )}
        </Table.Tbody>
      </Table>
      {loading && (
        <Center p="md">
          <Loader size="sm" />
        </Center>
      )}
      {!loading && rows.length === 0 && (
        <Center p="xl">
          <Text c="dimmed">{props.empty}</Text>
        </Center>
      )}
    </Box>
  );
}
