// Use cases of this feature, exported for every surface.
export { CreateInboundInput, createInbound } from './create-inbound.ts';
export { deleteInbound } from './delete-inbound.ts';
export type { InboundView } from './inbound.ts';
export { getInbound, type InboundFilter, listInbounds } from './read-inbounds.ts';
export { UpdateInboundInput, updateInbound } from './update-inbound.ts';
