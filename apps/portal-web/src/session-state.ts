import { useSyncExternalStore } from 'react';
import { session } from './api.ts';

export type SessionState = 'resuming' | 'signed-in' | 'signed-out';

// A reload or a new tab starts signed out in memory: one refresh through the HttpOnly cookie
// tells whether a session lives. Started once, when the app loads.
let resumed = false;
const listeners = new Set<() => void>();
const emit = () => {
  for (const l of listeners) l();
};
void session.resume().finally(() => {
  resumed = true;
  emit();
});
session.onChange(emit);

const snapshot = (): SessionState => (session.signedIn ? 'signed-in' : resumed ? 'signed-out' : 'resuming');
const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

/** Whether this tab is signed in (resuming while the first refresh is under way). */
export const useSessionState = (): SessionState => useSyncExternalStore(subscribe, snapshot);
