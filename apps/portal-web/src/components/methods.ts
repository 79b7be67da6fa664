import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';

/** GET /portal/v1/auth/methods: which sign-in forms and whether registration is offered. */
export const useAuthMethods = () =>
  useQuery({
    queryKey: ['/portal/v1/auth/methods'],
    queryFn: () => unwrap(api.GET('/portal/v1/auth/methods')),
    staleTime: 60_000,
  });
