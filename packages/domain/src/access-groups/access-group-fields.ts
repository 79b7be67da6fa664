import { z } from 'zod';
import { RefId, trimmedName } from '../shared/fields.ts';

/** Fields of an access group that create and update share. */

export const GroupName = trimmedName(100);

export const InboundIds = z.array(RefId).max(1000).meta({ description: 'existing inbounds; duplicates are dropped' });
