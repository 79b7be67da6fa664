import { z } from 'zod';
import { labelName, Port, RefId } from '../shared/fields.ts';

/** Fields of a chain that create and update share. */

export const CHAIN_NAME_MAX = 64;
export const CHAIN_HOPS_MIN = 2;
export const CHAIN_HOPS_MAX = 16;

export const ChainName = labelName(CHAIN_NAME_MAX).meta({ example: 'fra-to-ams' });

const ChainHopInput = z
  .object({ node_id: RefId, port: Port.meta({ description: "Where this hop's chain-in listens on its node" }) })
  .strict()
  .meta({ id: 'ChainHopInput' });

const HOP_COUNT = `a chain has ${CHAIN_HOPS_MIN}-${CHAIN_HOPS_MAX} hops`;

/** 2-16 hops, each node at most once (whether the nodes exist and their ports are free is the use case's question). */
export const ChainHops = z
  .array(ChainHopInput)
  .min(CHAIN_HOPS_MIN, HOP_COUNT)
  .max(CHAIN_HOPS_MAX, HOP_COUNT)
  .superRefine((hops, ctx) => {
    const seen = new Map<string, number>();
    hops.forEach((h, i) => {
      const first = seen.get(h.node_id);
      if (first === undefined) seen.set(h.node_id, i);
      else
        ctx.addIssue({
          code: 'custom',
          message: `node already used by hop ${first}; a node appears once per chain`,
          path: [i, 'node_id'],
        });
    });
  })
  .meta({
    description: 'Ordered: traffic enters at the first hop (where inbounds routed through the chain live). Each node at most once.',
  });
