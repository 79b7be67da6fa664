import { ApiError } from '@svc/api-client';
import { QueryClient } from '@tanstack/react-query';

/**
 * One cache for the tab. A refusal (4xx) is an answer, not a failure to retry; a network error or
 * a 5xx is retried twice.
 */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      retry: (count, err) => count < 2 && !(err instanceof ApiError && err.problem.status < 500),
    },
    mutations: { retry: false },
  },
});
