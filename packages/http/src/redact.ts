/**
 * A request path fit for a log line: the token of a subscription link (`/sub/<token>`, full
 * proxy access for whoever reads it) becomes `/sub/[redacted]`. Linear, no regular expression.
 */
export function redactPath(path: string): string {
  const at = path.indexOf('/sub/');
  if (at === -1) return path;
  const start = at + '/sub/'.length;
  let end = path.indexOf('/', start);
  if (end === -1) end = path.length;
  return `${path.slice(0, start)}[redacted]${path.slice(end)}`;
}
