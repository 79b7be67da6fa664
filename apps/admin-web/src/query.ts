import { ApiError } from '@svc/api-client';
import { QueryClient } from '@tanstack/react-query';

/**
 * One cache for the tab. A refusal (4xx) is an answer, not a failure to retry; a network error or
 * a 5xx/503 is retried twice. Nothing is polled while the tab is hidden (TanStack Query's default
 * for refetchInterval), and the live event stream (events.ts) invalidates what changed.
 */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 15_000,
      retry: (count, err) => count < 2 && !(err instanceof ApiError && err.problem.status < 500),
    },
    mutations: { retry: false },
  },
});
