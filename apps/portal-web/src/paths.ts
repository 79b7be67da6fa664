/**
 * Where this app and its API live, read from the page's <base href> (set by the server from its
 * public base URL): '/portal/' on a plain installation, '/s3cr3t/portal/' behind a prefix.
 */
const appBase = new URL(document.baseURI).pathname;
const root = appBase.replace(/portal\/?$/, '');

/** The router's base path ('/portal' or '/prefix/portal'). */
export const ROUTER_BASE = appBase.replace(/\/$/, '');
/** '/portal/v1' or '/prefix/portal/v1'. */
export const PORTAL_API = `${root}portal/v1`;
/** What comes before the generated client's paths (which start with /portal/v1): '' or '/prefix'. */
export const ROOT_PREFIX = root.replace(/\/$/, '');
