import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';

/**
 * Names for ids shown in lists and choices in forms: nodes, profiles, inbounds and groups, up
 * to 200 of each (a page). Lists that can hold more (clients) are searched instead.
 */
export function useNodeOptions() {
  return useQuery({
    queryKey: ['nodes', 'options'],
    queryFn: () => unwrap(api.GET('/api/v1/nodes', { params: { query: { limit: 200 } } })),
    select: (p) => p.items.map((n) => ({ value: n.id, label: n.name })),
  });
}
export function useProfileOptions() {
  return useQuery({
    queryKey: ['inbound-profiles', 'options'],
    queryFn: () => unwrap(api.GET('/api/v1/inbound-profiles', { params: { query: { limit: 200 } } })),
    select: (p) => p.items.map((x) => ({ value: x.id, label: `${x.name} (${x.protocol}, ${x.stream.network})` })),
  });
}
export function useInboundOptions() {
  return useQuery({
    queryKey: ['inbounds', 'options'],
    queryFn: () => unwrap(api.GET('/api/v1/inbounds', { params: { query: { limit: 200 } } })),
    select: (p) => p.items,
  });
}
export function useGroupOptions() {
  return useQuery({
    queryKey: ['access-groups', 'options'],
    queryFn: () => unwrap(api.GET('/api/v1/access-groups', { params: { query: { limit: 200 } } })),
    select: (p) => p.items.map((g) => ({ value: g.id, label: g.name })),
  });
}

export const nameOf = (options: Array<{ value: string; label: string }> | undefined, id: string) =>
  options?.find((o) => o.value === id)?.label ?? id;
