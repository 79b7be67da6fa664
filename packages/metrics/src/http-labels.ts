const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A request method as a label: the standard ones, anything else `other` (methods are the client's to invent). */
export const methodLabel = (method: string): string => (METHODS.has(method) ? method : 'other');

/** 200 -> `2xx`. */
export const statusClass = (status: number): string => (status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other');

/** The route label of a request no route matched (404 route-not-found, 405). */
export const UNMATCHED_ROUTE = 'unmatched';
