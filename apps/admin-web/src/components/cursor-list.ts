import { useInfiniteQuery } from '@tanstack/react-query';

/**
 * A list read page by page from a cursor route (spec 4.2: `limit`, `cursor` → `items`,
 * `next_cursor`): every page fetched so far, flattened, and a function to fetch the next.
 */
export function useCursorList<T>(
  key: readonly unknown[],
  page: (
    cursor: string | undefined,
  ) => Promise<{ items: T[]; next_cursor: string | null; total?: number | null; total_exact?: boolean | null }>,
  refetchInterval?: number,
  enabled = true,
) {
  const query = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => page(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    enabled,
    ...(refetchInterval ? { refetchInterval } : {}),
  });
  const rows = query.data?.pages.flatMap((p) => p.items) ?? [];
  const first = query.data?.pages[0];
  return {
    rows,
    loading: (enabled && query.isPending) || query.isFetchingNextPage,
    error: query.error,
    /** The first page's total (searchable lists), and whether it was counted or estimated. */
    total: first?.total ?? null,
    totalExact: first?.total_exact ?? null,
    hasMore: query.hasNextPage,
    loadMore: () => {
      if (!query.isFetchingNextPage) void query.fetchNextPage();
    },
  };
}
