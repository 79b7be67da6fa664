import type { AdminSchemas } from '@svc/api-client';
import { createContext, useContext } from 'react';

export type Me = AdminSchemas['Admin'];
export const MeContext = createContext<Me | null>(null);

/** The signed-in admin (inside the signed-in frame only). */
export function useMe(): Me {
  const me = useContext(MeContext);
  if (!me) throw new Error('useMe outside the signed-in frame');
  return me;
}

/** What the role allows (the server enforces it again; the screens only hide what would be refused). */
export function useCan() {
  const me = useMe();
  return { write: me.role !== 'viewer', owner: me.role === 'owner', role: me.role };
}
