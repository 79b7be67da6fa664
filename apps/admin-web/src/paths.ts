/**
 * Where this app and the API live, read from the page's <base href> (set by the server from its
 * public base URL): '/admin/' on a plain installation, '/s3cr3t/admin/' behind a prefix.
 */
const appBase = new URL(document.baseURI).pathname;
const root = appBase.replace(/admin\/?$/, '');

/** The router's base path ('/admin' or '/prefix/admin'). */
export const ROUTER_BASE = appBase.replace(/\/$/, '');
/** '/api/v1' or '/prefix/api/v1'. */
export const API_BASE = `${root}api/v1`;
/** Where the public subscription links and the portal API live: the same root. */
export const ROOT_BASE = root;
