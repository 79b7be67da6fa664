// Use cases of this feature, exported for every surface.
export type { AccessGroupView } from './access-group.ts';
export { CreateAccessGroupInput, createAccessGroup } from './create-access-group.ts';
export { deleteAccessGroup } from './delete-access-group.ts';
export { type AccessGroupFilter, getAccessGroup, listAccessGroups } from './read-access-groups.ts';
export { UpdateAccessGroupInput, updateAccessGroup } from './update-access-group.ts';
